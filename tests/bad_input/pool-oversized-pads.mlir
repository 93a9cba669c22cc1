// ERROR: {file}:3:3: error: nn.max_pool2d: pads [2, 0, 0, 0] must be smaller than the window extent 2 (kernel 2, dilation 1) along spatial axis 0; a window would see only padding
func.func @f(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x9x7xf32> {
  %0 = nn.max_pool2d %x kernel [2, 2] strides [1, 1] pads [2, 0, 0, 0] dilations [1, 1] : tensor<1x3x8x8xf32> -> tensor<1x3x9x7xf32>
  func.return %0 : tensor<1x3x9x7xf32>
}
