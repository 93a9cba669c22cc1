// ARGS: -p cse{
// ERROR: error: bad pass pipeline 'cse{': Expected argument name here (at character 5)
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
