// ERROR: {file}:3:3: error: nn.max_pool2d: strides must be positive, got [0, 2]
func.func @f(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x7x4xf32> {
  %0 = nn.max_pool2d %x kernel [2, 2] strides [0, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x3x8x8xf32> -> tensor<1x3x7x4xf32>
  func.return %0 : tensor<1x3x7x4xf32>
}
