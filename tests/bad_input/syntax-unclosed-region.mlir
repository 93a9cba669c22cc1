// ERROR: {file}:5:1: error: expected '}' to close the region (or a block label such as ^bb1:)
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
