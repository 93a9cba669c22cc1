// TOOL: nnlayout-run
// ARGS: -p insert-layouts,bufferize,plan-memory --backend generated --random-inputs 0
// ERROR: {file}:6:3: error: #nn.kernel<"relu_any"> is a kernel for nn.relu, not for nn.softmax
// NOTE: the generated module binds its kernels through the same check (KeyError before).
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = nn.softmax %x axis 1 {kernel = #nn.kernel<"relu_any", operands = ["*"], results = ["*"]>} : tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
