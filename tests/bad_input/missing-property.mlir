// ERROR: {file}:3:22: error: Expected 'axis'
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = nn.softmax %x : tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
