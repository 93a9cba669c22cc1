// ARGS: -p default-pipeline{padding=maybe}
// ERROR: error: bad pass options in 'default-pipeline{padding=maybe}': Incompatible types: given ('maybe',), expected <class 'bool'>
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
