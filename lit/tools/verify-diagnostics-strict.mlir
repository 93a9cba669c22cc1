// As mlir-opt's: every diagnostic must be expected. The first chunk expects its remark; the
// second does not, and is listed with its location; the third expects an error and a remark
// that are not produced; the fourth produces an error nobody expected.
// RUN: not nnlayout-opt %s --split-input-file --verify-diagnostics -p 'select-dispatch{target=avx2},insert-layouts,propagate-layouts' 2>&1 | filecheck %s

func.func @expected(%x: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %w = nn.constant dense<0.1> : tensor<8x8x3x3xf32>
  // expected-remark @+1 {{operand 0 reordered from plain to NCHW8c: conv2d_nchwc needs NCHW8c}}
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  func.return %c : tensor<1x8x8x8xf32>
}

// -----

func.func @unexpected(%x: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %w = nn.constant dense<0.1> : tensor<8x8x3x3xf32>
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  func.return %c : tensor<1x8x8x8xf32>
}

// -----

func.func @unmet(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{never}}
  // expected-remark @+1 {{never either}}
  %0 = nn.relu %x : tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @bad(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = nn.softmax %x axis 5 : tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK:      error: diagnostics did not match:
// CHECK-NEXT: verify-diagnostics-strict.mlir:17:3: unexpected remark: [propagate-layouts] nn.conv2d: operand 0 reordered from plain to NCHW8c: conv2d_nchwc needs NCHW8c
// CHECK-NEXT: verify-diagnostics-strict.mlir:26: expected error not produced: {{[{][{]never[}][}]}}
// CHECK-NEXT: verify-diagnostics-strict.mlir:26: expected remark not produced: {{[{][{]never either[}][}]}}
// CHECK-NEXT: verify-diagnostics-strict.mlir:33:3: unexpected error: nn.softmax: {{.*}}
// CHECK-NOT: unexpected
