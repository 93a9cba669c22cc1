// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics -p 'select-dispatch{target=avx2}'
// RUN: not nnlayout-opt %s --split-input-file -p 'select-dispatch{target=avx2}' 2>&1 | filecheck %s

// An op that already has a kernel keeps it (one written by hand, or by a pass of the user's)
// if the kernel is registered and implements the op: the runtime would refuse any other, so
// select-dispatch says so where opt and FileCheck users look, at the op.

// CHECK: select-dispatch-kept-kernel.mlir:[[# @LINE + 3]]:3: error: select-dispatch: no kernel named 'relu_fast' is registered
func.func @unknown(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  // expected-error @+1 {{select-dispatch: no kernel named 'relu_fast' is registered}}
  %y = nn.relu %x {kernel = #nn.kernel<"relu_fast", operands = [""], results = [""]>} : tensor<1x4xf32>
  func.return %y : tensor<1x4xf32>
}

// -----

// CHECK: select-dispatch-kept-kernel.mlir:[[# @LINE + 3]]:3: error: select-dispatch: #nn.kernel<"sigmoid_ref"> is a kernel for nn.sigmoid, not for nn.relu
func.func @for_another_op(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  // expected-error @+1 {{select-dispatch: #nn.kernel<"sigmoid_ref"> is a kernel for nn.sigmoid, not for nn.relu}}
  %y = nn.relu %x {kernel = #nn.kernel<"sigmoid_ref", operands = [""], results = [""]>} : tensor<1x4xf32>
  func.return %y : tensor<1x4xf32>
}

// -----

// A kernel of another target than the pass's is kept as it is.
// CHECK-LABEL: func.func @kept
// CHECK: nn.relu %x {kernel = #nn.kernel<"relu_ref", operands = [""], results = [""], in_place = 0>}
func.func @kept(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %y = nn.relu %x {kernel = #nn.kernel<"relu_ref", operands = [""], results = [""], in_place = 0>} : tensor<1x4xf32>
  func.return %y : tensor<1x4xf32>
}
