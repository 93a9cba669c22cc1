// ERROR: {file}:3:3: error: nn.batch_norm: epsilon must be non-negative, got -1.0
func.func @f(%x: tensor<1x3x8x8xf32>, %s: tensor<3xf32>) -> tensor<1x3x8x8xf32> {
  %0 = nn.batch_norm %x, %s, %s, %s, %s epsilon -1.0 : (tensor<1x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x8x8xf32>
  func.return %0 : tensor<1x3x8x8xf32>
}
