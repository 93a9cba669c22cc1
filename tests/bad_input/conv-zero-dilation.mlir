// ERROR: {file}:3:3: error: nn.conv2d: dilations must be positive, got [1, 0]
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 0] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}
