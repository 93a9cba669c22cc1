// nn.grid_sample: round trip of its pretty form (and through the generic form), and its verifier's messages.
// RUN: nnlayout-opt %s | filecheck %s
// RUN: nnlayout-opt %s --print-op-generic | nnlayout-opt | filecheck %s

func.func @sample(%x: tensor<1x5x8x9xf32>, %g: tensor<1x4x6x2xf32>) -> (tensor<1x5x4x6xf32>, tensor<1x5x4x6xf32>) {
  %0 = nn.grid_sample %x, %g mode "linear" padding "zeros" : (tensor<1x5x8x9xf32>, tensor<1x4x6x2xf32>) -> tensor<1x5x4x6xf32>
  %1 = nn.grid_sample %x, %g mode "cubic" padding "reflection" align_corners : (tensor<1x5x8x9xf32>, tensor<1x4x6x2xf32>) -> tensor<1x5x4x6xf32>
  func.return %0, %1 : tensor<1x5x4x6xf32>, tensor<1x5x4x6xf32>
}
// CHECK-LABEL: func.func @sample
// CHECK-NEXT: %0 = nn.grid_sample %x, %g mode "linear" padding "zeros" : (tensor<1x5x8x9xf32>, tensor<1x4x6x2xf32>) -> tensor<1x5x4x6xf32>
// CHECK-NEXT: %1 = nn.grid_sample %x, %g mode "cubic" padding "reflection" align_corners : (tensor<1x5x8x9xf32>, tensor<1x4x6x2xf32>) -> tensor<1x5x4x6xf32>
