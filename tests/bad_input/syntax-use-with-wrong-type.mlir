// ERROR: {file}:3:16: error: operand is used with type tensor<3xf32>, but has been previously used or defined with type tensor<2xf32>
func.func @f(%x: tensor<2xf32>) -> tensor<3xf32> {
  %0 = nn.relu %x : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
