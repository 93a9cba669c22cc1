// NOTE: xDSL checks no dominance; nnlayout-run failed with an internal KeyError here
// ERROR: {file}:4:3: error: operand 0 of nn.relu is used before it is defined (by this op or a later one)
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu %0 : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
