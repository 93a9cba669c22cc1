// Round trip of nn.argmax, nn.argmin and nn.topk, in the pretty and the generic form.
// RUN: nnlayout-opt %s | nnlayout-opt | filecheck %s
// RUN: nnlayout-opt %s --print-op-generic | nnlayout-opt | filecheck %s

func.func @select(%x: tensor<1x21x8x8xf32>, %l: tensor<2x100xf32>) -> (tensor<1x1x8x8xi64>, tensor<1x21x8x1xi64>, tensor<2x5xi64>, tensor<2x100xi64>) {
  %0 = nn.argmax %x axis 1 : tensor<1x21x8x8xf32> -> tensor<1x1x8x8xi64>
  %1 = nn.argmin %x axis -1 select_last : tensor<1x21x8x8xf32> -> tensor<1x21x8x1xi64>
  %2 = nn.topk %l axis 1 k 5 : tensor<2x100xf32> -> tensor<2x5xi64>
  %3 = nn.topk %l axis -1 k 100 smallest : tensor<2x100xf32> -> tensor<2x100xi64>
  func.return %0, %1, %2, %3 : tensor<1x1x8x8xi64>, tensor<1x21x8x1xi64>, tensor<2x5xi64>, tensor<2x100xi64>
}
// CHECK-LABEL: func.func @select
// CHECK-NEXT: %0 = nn.argmax %x axis 1 : tensor<1x21x8x8xf32> -> tensor<1x1x8x8xi64>
// CHECK-NEXT: %1 = nn.argmin %x axis -1 select_last : tensor<1x21x8x8xf32> -> tensor<1x21x8x1xi64>
// CHECK-NEXT: %2 = nn.topk %l axis 1 k 5 : tensor<2x100xf32> -> tensor<2x5xi64>
// CHECK-NEXT: %3 = nn.topk %l axis -1 k 100 smallest : tensor<2x100xf32> -> tensor<2x100xi64>
