// TOOL: nnlayout-run
// ARGS: --random-inputs 0
// ERROR: {file}:5:3: error: operand 0 of nn.neg is used before it is defined (by this op or a later one)
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.neg %1 : tensor<2xf32>
  %1 = nn.relu %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
