// ERROR: {file}:3:3: error: nn.batch_norm: var must have shape [3] (the input's channels), got [4]
func.func @f(%x: tensor<1x3x8x8xf32>, %s: tensor<3xf32>, %v: tensor<4xf32>) -> tensor<1x3x8x8xf32> {
  %0 = nn.batch_norm %x, %s, %s, %s, %v epsilon 1.0e-05 : (tensor<1x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<1x3x8x8xf32>
  func.return %0 : tensor<1x3x8x8xf32>
}
