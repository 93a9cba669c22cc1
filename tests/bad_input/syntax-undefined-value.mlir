// ERROR: {file}:3:3: error: values used but not defined: [%y]
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu %y : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
