// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics
// RUN: not nnlayout-opt %s --split-input-file 2>&1 | filecheck %s

func.func @bad_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<5xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{nn.conv2d: bias must have shape [4], got [5]}}
  %0 = nn.conv2d %x, %w, %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<5xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}
// CHECK: verify-diagnostics.mlir:6:3: error: nn.conv2d: bias must have shape [4], got [5]

// -----

func.func @good(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = nn.relu %x : tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
