// a hand-written or plugin-made kernel attribute is checked against the op it is on: this
// RUN: rm -rf %t
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// CHECK: [[FILE]]:9:3: error: #nn.kernel<"gemm_ref"> is a kernel for nn.gemm, not for nn.matmul

// one was an internal error ('MatmulOp' object has no attribute 'trans_a').
func.func @f(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = nn.matmul %a, %b {kernel = #nn.kernel<"gemm_ref", operands = ["", ""], results = [""]>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %0 : tensor<8x8xf32>
}
