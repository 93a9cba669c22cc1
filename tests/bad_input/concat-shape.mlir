// ERROR: {file}:3:3: error: nn.concat: input 1 has shape [1, 8, 5, 4], which differs from input 0 [1, 8, 4, 4] outside the concatenation axis 1
func.func @f(%a: tensor<1x8x4x4xf32>, %b: tensor<1x8x5x4xf32>) -> tensor<1x16x4x4xf32> {
  %0 = nn.concat %a, %b axis 1 : (tensor<1x8x4x4xf32>, tensor<1x8x5x4xf32>) -> tensor<1x16x4x4xf32>
  func.return %0 : tensor<1x16x4x4xf32>
}
