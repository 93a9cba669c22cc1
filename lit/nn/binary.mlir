// Round trip of nn.max, nn.min and nn.prelu, in the pretty and the generic form; their
// verifier messages (PRelu broadcasts its slope to the input only).
// RUN: nnlayout-opt %s --split-input-file | filecheck %s
// RUN: nnlayout-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

func.func @extrema(%x: tensor<1x20x4x4xf32>, %c: tensor<20x1x1xf32>, %s: tensor<1xf32>) -> tensor<1x20x4x4xf32> {
  %0 = nn.max %x, %c : (tensor<1x20x4x4xf32>, tensor<20x1x1xf32>) -> tensor<1x20x4x4xf32>
  %1 = nn.min %s, %0 : (tensor<1xf32>, tensor<1x20x4x4xf32>) -> tensor<1x20x4x4xf32>
  %2 = nn.prelu %1, %c : (tensor<1x20x4x4xf32>, tensor<20x1x1xf32>) -> tensor<1x20x4x4xf32>
  %3 = nn.prelu %2, %s : (tensor<1x20x4x4xf32>, tensor<1xf32>) -> tensor<1x20x4x4xf32>
  func.return %3 : tensor<1x20x4x4xf32>
}
// CHECK-LABEL: func.func @extrema
// CHECK-NEXT: %0 = nn.max %x, %c : (tensor<1x20x4x4xf32>, tensor<20x1x1xf32>) -> tensor<1x20x4x4xf32>
// CHECK-NEXT: %1 = nn.min %s, %0 : (tensor<1xf32>, tensor<1x20x4x4xf32>) -> tensor<1x20x4x4xf32>
// CHECK-NEXT: %2 = nn.prelu %1, %c : (tensor<1x20x4x4xf32>, tensor<20x1x1xf32>) -> tensor<1x20x4x4xf32>
// CHECK-NEXT: %3 = nn.prelu %2, %s : (tensor<1x20x4x4xf32>, tensor<1xf32>) -> tensor<1x20x4x4xf32>
// GENERIC: %0 = "nn.max"(%x, %c) : (tensor<1x20x4x4xf32>, tensor<20x1x1xf32>) -> tensor<1x20x4x4xf32>
// GENERIC: %1 = "nn.min"(%s, %0) : (tensor<1xf32>, tensor<1x20x4x4xf32>) -> tensor<1x20x4x4xf32>
// GENERIC: %2 = "nn.prelu"(%1, %c) : (tensor<1x20x4x4xf32>, tensor<20x1x1xf32>) -> tensor<1x20x4x4xf32>
