// the generated module binds its kernels through the same check (KeyError before).
// RUN: rm -rf %t
// RUN: not nnlayout-run %s -p insert-layouts,bufferize,plan-memory --backend generated --random-inputs 0 --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// CHECK: [[FILE]]:8:3: error: #nn.kernel<"relu_any"> is a kernel for nn.relu, not for nn.softmax

func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = nn.softmax %x axis 1 {kernel = #nn.kernel<"relu_any", operands = ["*"], results = ["*"]>} : tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
