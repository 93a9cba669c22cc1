// RUN: nnlayout-opt %s --verify-diagnostics -p insert-layouts | filecheck %s

// The sigmoid was made after select-dispatch (by a user's pattern, say): it has no kernel, so
// it keeps its layouts and the interpreter and generated code run its reference kernel.
// CHECK: %1 = nn.sigmoid %0 : tensor<4xf32>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.relu %x {kernel = #nn.kernel<"relu_any", operands = ["*"], results = ["*"], in_place = 0>} : tensor<4xf32>
  // expected-remark @+1 {{nn.sigmoid: has no kernel (made after select-dispatch?): it keeps its layouts and runs its reference kernel}}
  %1 = nn.sigmoid %0 : tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
