// ERROR: {file}:3:3: error: nn.conv2d: window of extent 9 (kernel 9, dilation 1) does not fit the padded height size 8
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x9x9xf32>) -> tensor<1x4x1x1xf32> {
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x9x9xf32>) -> tensor<1x4x1x1xf32>
  func.return %0 : tensor<1x4x1x1xf32>
}
