// ERROR: {file}:3:3: error: nn.conv_transpose2d: output_padding [1, 0] must be smaller than the stride or the dilation on each axis
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x2x11x10xf32> {
  %0 = nn.conv_transpose2d %x, %w strides [1, 1] pads [0, 0, 0, 0] output_padding [1, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x2x11x10xf32>
  func.return %0 : tensor<1x2x11x10xf32>
}
