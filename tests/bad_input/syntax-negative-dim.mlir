// ERROR: {file}:2:47: error: Expected shape type.
func.func @f(%x: tensor<4x2xf32>) -> tensor<4x-2xf32> {
  %0 = nn.relu %x : tensor<4x-2xf32>
  func.return %0 : tensor<4x-2xf32>
}
