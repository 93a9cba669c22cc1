// ERROR: {file}:6:3: error: nn.fused_conv2d: min is NaN; a bound must be a number (leave it out for none)
// NOTE: the check nn.clip makes, for a clip fused into a convolution (oneDNN refused it inside).
func.func @f(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %w = nn.constant dense<0.1> : tensor<8x8x1x1xf32>
  %b = nn.constant dense<0.0> : tensor<8xf32>
  %y = nn.fused_conv2d %x, %w, %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 activation "clip" min 0x7FC00000 max 6.0 : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
  func.return %y : tensor<1x8x4x4xf32>
}
