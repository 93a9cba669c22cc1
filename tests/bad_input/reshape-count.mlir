// ERROR: {file}:3:3: error: nn.reshape: cannot reshape [2, 3] (6 elements) to [4, 2] (8 elements)
func.func @f(%x: tensor<2x3xf32>) -> tensor<4x2xf32> {
  %0 = nn.reshape %x : tensor<2x3xf32> -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}
