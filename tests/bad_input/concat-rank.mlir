// ERROR: {file}:3:3: error: nn.concat: input 1 has rank 3 ([8, 4, 4]), but input 0 has rank 4 ([1, 8, 4, 4])
func.func @f(%a: tensor<1x8x4x4xf32>, %b: tensor<8x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %0 = nn.concat %a, %b axis 1 : (tensor<1x8x4x4xf32>, tensor<8x4x4xf32>) -> tensor<1x16x4x4xf32>
  func.return %0 : tensor<1x16x4x4xf32>
}
