// ERROR: {file}:3:3: error: nn.avg_pool2d: kernel must be positive, got [2, 0]
func.func @f(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x7x8xf32> {
  %0 = nn.avg_pool2d %x kernel [2, 0] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x3x8x8xf32> -> tensor<1x3x7x8xf32>
  func.return %0 : tensor<1x3x7x8xf32>
}
