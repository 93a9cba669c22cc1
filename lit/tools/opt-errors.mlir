// RUN: not nnlayout-opt %s 2>&1 | filecheck %s
// RUN: not nnlayout-opt %s -p nope 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not nnlayout-opt %s -p 'cse{bogus=1}' 2>&1 | filecheck %s --check-prefix=OPTION

func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}
// CHECK: opt-errors.mlir:6:3: error: nn.conv2d: input has 3 channels but weight expects 4 (groups=1)
// CHECK-NEXT: %0 = nn.conv2d
// CHECK-NEXT: ^
// CHECK-NOT: Traceback

// PASS: error: unknown pass 'nope'; available passes:
// OPTION: error: pass 'cse' has no option 'bogus'; its options: none
