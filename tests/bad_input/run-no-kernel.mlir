// TOOL: nnlayout-run
// ARGS: --random-inputs 0
// ERROR: {file}:5:3: error: the interpreter cannot run 'arith.constant' (no kernel)
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = arith.constant dense<1.0> : tensor<2xf32>
  %0 = nn.add %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
