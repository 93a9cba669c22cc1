// #nn.kernel attributes that are malformed or do not fit their op.
// Each chunk is one case; the second RUN checks its whole first error line (file:line:col)
// and, through `not`, that no traceback is printed.
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics
// RUN: not nnlayout-opt %s --split-input-file 2>&1 | filecheck %s -DFILE %s

// kernel-layout-count
func.func @f(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  // expected-error @+1 {{nn.relu: #nn.kernel<"conv2d_nchwc"> gives layouts for 2 operand(s) and 1 result(s); the op has 1 and 1}}
  %0 = nn.relu %x {kernel = #nn.kernel<"conv2d_nchwc", operands = ["NCHW8c", "OIHW8i8o"], results = ["NCHW8c"]>} : tensor<1x16x8x8xf32>
  func.return %0 : tensor<1x16x8x8xf32>
}
// CHECK: [[FILE]]:10:3: error: nn.relu: #nn.kernel<"conv2d_nchwc"> gives layouts for 2 operand(s) and 1 result(s); the op has 1 and 1

// -----

// kernel-not-a-kernel-attr: it was ignored: select-dispatch then skipped the op as already dispatched.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{nn.relu: attribute 'kernel' must be an #nn.kernel<...>, got "relu_any"}}
  %0 = nn.relu %x {kernel = "relu_any"} : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: [[FILE]]:20:3: error: nn.relu: attribute 'kernel' must be an #nn.kernel<...>, got "relu_any"

// -----

// kernel-parameter-twice
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{#nn.kernel parameter 'in_place' is given twice}}
  %0 = nn.relu %x {kernel = #nn.kernel<"relu_any", operands = ["*"], results = ["*"], in_place = 0, in_place = 0>} : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: [[FILE]]:30:101: error: #nn.kernel parameter 'in_place' is given twice
