// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics -p insert-layouts | filecheck %s

// The sigmoid was made after select-dispatch (by a user's pattern, say): it has no kernel, so
// it keeps its layouts and the interpreter and generated code run its reference kernel.
// CHECK: %1 = nn.sigmoid %0 : tensor<4xf32>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.relu %x {kernel = #nn.kernel<"relu_any", operands = ["*"], results = ["*"], in_place = 0>} : tensor<4xf32>
  // expected-remark @+1 {{nn.sigmoid: has no kernel (made after select-dispatch?): it keeps its layouts and runs its reference kernel}}
  %1 = nn.sigmoid %0 : tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// -----

// Before select-dispatch no op has a kernel: the pass changes nothing, and says so once.
// CHECK-LABEL: func.func @g
// CHECK: %0 = nn.relu %x : tensor<4xf32>
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-remark @+1 {{nn.relu: no op has a kernel (select-dispatch has not run): every layout is left as it is}}
  %0 = nn.relu %x : tensor<4xf32>
  %1 = nn.sigmoid %0 : tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
