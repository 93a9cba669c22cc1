// ARGS: -p default-pipeline{padding=maybe}
// ERROR: error: option 'padding' of pass 'default-pipeline' takes true or false, got 'maybe'
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
