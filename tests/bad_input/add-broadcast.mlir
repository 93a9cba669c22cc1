// ERROR: {file}:3:3: error: nn.add: shapes [2, 3], [3, 2] do not broadcast (dimension 0 of the broadcast result has sizes [2, 3])
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x3xf32> {
  %0 = nn.add %a, %b : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
