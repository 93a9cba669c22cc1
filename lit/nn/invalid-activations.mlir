// Verifier messages of the activations and of a fused convolution's activation attributes.
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics

func.func @gelu_approximation(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{nn.gelu: approximate "erf" is not one of none, tanh}}
  %0 = nn.gelu %x approximate "erf" : tensor<2x3xf32>
  func.return
}

// -----

func.func @hardsigmoid_nan(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{nn.hardsigmoid: alpha must be finite, got nan}}
  %0 = nn.hardsigmoid %x alpha 0x7FC00000 beta 0.5 : tensor<2x3xf32>
  func.return
}

// -----

func.func @elu_inf(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{nn.elu: alpha must be finite, got inf}}
  %0 = nn.elu %x alpha 0x7F800000 : tensor<2x3xf32>
  func.return
}

// -----

func.func @fused_needs_beta(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{nn.fused_conv2d: activation "hardsigmoid" needs 'beta'}}
  %0 = nn.fused_conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "hardsigmoid" alpha 0.2 : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  func.return
}

// -----

func.func @fused_beta_of_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{nn.fused_conv2d: 'beta' does not apply to activation "relu"}}
  %0 = nn.fused_conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "relu" beta 0.5 : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  func.return
}

// -----

func.func @fused_gelu_approximation(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{nn.fused_conv2d: activation nn.gelu: approximate "fast" is not one of none, tanh}}
  %0 = nn.fused_conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "gelu" approximate "fast" : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  func.return
}

// -----

func.func @celu_zero_alpha(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{nn.celu: alpha must be positive and finite, got 0.0}}
  %0 = nn.celu %x alpha 0.0 : tensor<2x8xf32>
  func.return
}

// -----

func.func @round_of_indices(%x: tensor<2x8xi64>) {
  // expected-error @+1 {{nn.round: does not take i1 (mask) or i64 (index) data}}
  %0 = nn.round %x : tensor<2x8xi64>
  func.return
}
