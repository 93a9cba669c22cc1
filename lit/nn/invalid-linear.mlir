// Every verifier message of the convolution and matrix-product ops, located at the bad op.
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics

func.func @conv_weight_rank_3(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+1 {{nn.conv2d: weight must have rank 4, got 3 ([4, 3, 3])}}
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_input_rank(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{nn.conv2d: input must have rank 4, got 3 ([3, 8, 8])}}
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_strides_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{nn.conv2d: strides needs 2 values, got [1, 1, 1]}}
  %0 = nn.conv2d %x, %w strides [1, 1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_pads_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{nn.conv2d: pads needs 4 values, got [1, 1]}}
  %0 = nn.conv2d %x, %w strides [1, 1] pads [1, 1] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @conv_zero_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{nn.conv2d: strides must be positive, got [0, 1]}}
  %0 = nn.conv2d %x, %w strides [0, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_zero_dilation(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{nn.conv2d: dilations must be positive, got [1, 0]}}
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 0] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_negative_pads(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{nn.conv2d: pads must be non-negative, got [0, -1, 0, 0]}}
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, -1, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x5xf32>
  func.return
}

// -----

func.func @conv_zero_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{nn.conv2d: groups must be positive, got 0}}
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 0 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_channels_not_divisible(%x: tensor<1x6x8x8xf32>, %w: tensor<4x1x3x3xf32>) {
  // expected-error @+1 {{nn.conv2d: input has 6 channels, not divisible by groups=4}}
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 4 : (tensor<1x6x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_channel_mismatch(%x: tensor<1x8x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{nn.conv2d: input has 8 channels but weight expects 6 (groups=2)}}
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 2 : (tensor<1x8x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_outputs_not_divisible(%x: tensor<1x4x8x8xf32>, %w: tensor<6x1x3x3xf32>) {
  // expected-error @+1 {{nn.conv2d: weight has 6 output channels, not divisible by groups=4}}
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 4 : (tensor<1x4x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return
}

// -----

func.func @conv_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+1 {{nn.conv2d: bias must have shape [4], got [1, 4]}}
  %0 = nn.conv2d %x, %w, %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x4xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_window_too_big(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x5x5xf32>) {
  // expected-error @+1 {{nn.conv2d: window of extent 9 (kernel 5, dilation 2) does not fit the padded height size 8}}
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [2, 2] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x5x5xf32>) -> tensor<1x4x1x1xf32>
  func.return
}

// -----

func.func @conv_result(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{nn.conv2d: result shape [1, 4, 8, 8] does not match the inferred shape [1, 4, 6, 6]}}
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @conv_transpose_output_padding_length(%x: tensor<1x8x4x4xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{nn.conv_transpose2d: output_padding needs 2 values, got [1]}}
  %0 = nn.conv_transpose2d %x, %w strides [2, 2] pads [0, 0, 0, 0] output_padding [1] dilations [1, 1] groups 1 : (tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<1x4x10x10xf32>
  func.return
}

// -----

func.func @conv_transpose_negative_output_padding(%x: tensor<1x8x4x4xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{nn.conv_transpose2d: output_padding must be non-negative, got [-1, 0]}}
  %0 = nn.conv_transpose2d %x, %w strides [2, 2] pads [0, 0, 0, 0] output_padding [-1, 0] dilations [1, 1] groups 1 : (tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<1x4x8x9xf32>
  func.return
}

// -----

func.func @conv_transpose_zero_groups(%x: tensor<1x8x4x4xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{nn.conv_transpose2d: groups must be positive, got 0}}
  %0 = nn.conv_transpose2d %x, %w strides [1, 1] pads [0, 0, 0, 0] output_padding [0, 0] dilations [1, 1] groups 0 : (tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_transpose_output_padding_too_big(%x: tensor<1x8x4x4xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{nn.conv_transpose2d: output_padding [2, 0] must be smaller than the stride or the dilation on each axis}}
  %0 = nn.conv_transpose2d %x, %w strides [2, 2] pads [0, 0, 0, 0] output_padding [2, 0] dilations [1, 1] groups 1 : (tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<1x4x11x9xf32>
  func.return
}

// -----

func.func @conv_transpose_channel_mismatch(%x: tensor<1x8x4x4xf32>, %w: tensor<4x8x3x3xf32>) {
  // expected-error @+1 {{nn.conv_transpose2d: input has 8 channels but weight expects 4 (weight is [C_in, C_out/groups, kH, kW])}}
  %0 = nn.conv_transpose2d %x, %w strides [1, 1] pads [0, 0, 0, 0] output_padding [0, 0] dilations [1, 1] groups 1 : (tensor<1x8x4x4xf32>, tensor<4x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return
}

// -----

func.func @conv_transpose_groups(%x: tensor<1x8x4x4xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{nn.conv_transpose2d: input has 8 channels, not divisible by groups=3}}
  %0 = nn.conv_transpose2d %x, %w strides [1, 1] pads [0, 0, 0, 0] output_padding [0, 0] dilations [1, 1] groups 3 : (tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<1x12x6x6xf32>
  func.return
}

// -----

func.func @conv_transpose_bias(%x: tensor<1x8x4x4xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{nn.conv_transpose2d: bias must have shape [8], got [4]}}
  %0 = nn.conv_transpose2d %x, %w, %b strides [1, 1] pads [0, 0, 0, 0] output_padding [0, 0] dilations [1, 1] groups 2 : (tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>, tensor<4xf32>) -> tensor<1x8x6x6xf32>
  func.return
}

// -----

func.func @conv_transpose_pads_eat_output(%x: tensor<1x8x1x1xf32>, %w: tensor<8x4x1x1xf32>) {
  // expected-error @+1 {{nn.conv_transpose2d: pads [1, 0, 0, 0] leave no output along spatial axis 0}}
  %0 = nn.conv_transpose2d %x, %w strides [1, 1] pads [1, 0, 0, 0] output_padding [0, 0] dilations [1, 1] groups 1 : (tensor<1x8x1x1xf32>, tensor<8x4x1x1xf32>) -> tensor<1x4x1x1xf32>
  func.return
}

// -----

func.func @conv_transpose_weight_rank(%x: tensor<1x8x4x4xf32>, %w: tensor<8x4x3xf32>) {
  // expected-error @+1 {{nn.conv_transpose2d: weight must have rank 4, got 3}}
  %0 = nn.conv_transpose2d %x, %w strides [1, 1] pads [0, 0, 0, 0] output_padding [0, 0] dilations [1, 1] groups 1 : (tensor<1x8x4x4xf32>, tensor<8x4x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_transpose_result(%x: tensor<1x8x4x4xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{nn.conv_transpose2d: result shape [1, 4, 8, 8] does not match the inferred shape [1, 4, 9, 9]}}
  %0 = nn.conv_transpose2d %x, %w strides [2, 2] pads [0, 0, 0, 0] output_padding [0, 0] dilations [1, 1] groups 1 : (tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @matmul_rank_0(%a: tensor<f32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{nn.matmul: operands must have rank >= 1}}
  %0 = nn.matmul %a, %b : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @matmul_contraction(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{nn.matmul: contraction sizes differ: lhs [2, 3] has K=3, rhs [4, 5] has K=4}}
  %0 = nn.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

func.func @matmul_batch(%a: tensor<2x4x3xf32>, %b: tensor<3x3x5xf32>) {
  // expected-error @+1 {{nn.matmul: shapes [2], [3] do not broadcast (dimension 0 of the broadcast result has sizes [2, 3])}}
  %0 = nn.matmul %a, %b : (tensor<2x4x3xf32>, tensor<3x3x5xf32>) -> tensor<2x4x5xf32>
  func.return
}

// -----

func.func @matmul_result(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{nn.matmul: result shape [2, 1] does not match the inferred shape [2]}}
  %0 = nn.matmul %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x1xf32>
  func.return
}

// -----

func.func @gemm_rank(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{nn.gemm: a must have rank 2, got 3 ([2, 3, 4])}}
  %0 = nn.gemm %a, %b alpha 1.0 beta 1.0 : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

func.func @gemm_contraction(%a: tensor<2x3xf32>, %b: tensor<5x4xf32>) {
  // expected-error @+1 {{nn.gemm: contraction sizes differ: a gives K=3, b gives K=4 (trans_a=0, trans_b=1)}}
  %0 = nn.gemm %a, %b trans_b alpha 1.0 beta 1.0 : (tensor<2x3xf32>, tensor<5x4xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

func.func @gemm_c_does_not_broadcast(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{nn.gemm: shapes [4], [2, 5] do not broadcast}}
  %0 = nn.gemm %a, %b, %c alpha 1.0 beta 1.0 : (tensor<2x3xf32>, tensor<3x5xf32>, tensor<4xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

func.func @gemm_c_too_big(%a: tensor<1x3xf32>, %b: tensor<3x5xf32>, %c: tensor<4x1xf32>) {
  // expected-error @+1 {{nn.gemm: c of shape [4, 1] does not broadcast to the result [1, 5]}}
  %0 = nn.gemm %a, %b, %c alpha 1.0 beta 1.0 : (tensor<1x3xf32>, tensor<3x5xf32>, tensor<4x1xf32>) -> tensor<1x5xf32>
  func.return
}

// -----

func.func @fused_addend_shape(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>, %b: tensor<8xf32>, %r: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{nn.fused_conv2d: addend shape [1, 8, 4, 4] is not the result shape [1, 8, 8, 8]}}
  %0 = nn.fused_conv2d %x, %w, %b add %r strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x8x8xf32>
  func.return
}

// -----

func.func @fused_unknown_activation(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{nn.fused_conv2d: unknown activation "erf"; expected one of relu, leaky_relu, clip, sigmoid, tanh, hardswish, hardsigmoid, gelu, swish, elu, softplus, mish}}
  %0 = nn.fused_conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "erf" : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  func.return
}

// -----

func.func @fused_stray_parameter(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{nn.fused_conv2d: 'alpha' does not apply to activation "relu"}}
  %0 = nn.fused_conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "relu" alpha 0.1 : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  func.return
}

// -----

func.func @fused_parameter_without_activation(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{nn.fused_conv2d: 'max' is given but there is no activation}}
  %0 = nn.fused_conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 max 6.0 : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  func.return
}

// -----

func.func @fused_leaky_relu_needs_alpha(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{nn.fused_conv2d: activation "leaky_relu" needs 'alpha'}}
  %0 = nn.fused_conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "leaky_relu" : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  func.return
}

// -----

func.func @fused_clip_bounds(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{nn.fused_conv2d: min 6.0 is greater than max 0.0}}
  %0 = nn.fused_conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "clip" min 6.0 max 0.0 : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  func.return
}

// -----

func.func @fused_matmul_bias(%x: tensor<2x4xf32>, %w: tensor<4x5xf32>, %b: tensor<4xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{nn.fused_matmul: bias must have shape [5] (rhs's columns), got [4]}}
  %y = nn.fused_matmul %x, %w bias %b : (tensor<2x4xf32>, tensor<4x5xf32>, tensor<4xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}

// -----

func.func @fused_matmul_activation(%x: tensor<2x4xf32>, %w: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{nn.fused_matmul: 'alpha' is given but there is no activation}}
  %y = nn.fused_matmul %x, %w alpha 0.5 : (tensor<2x4xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}
