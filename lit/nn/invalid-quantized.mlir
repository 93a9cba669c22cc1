// Verifier messages of the quantized ops and of float ops given quantized data.
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics

func.func @add_mixed(%a: tensor<4xui8>, %b: tensor<4xf32>) {
  // expected-error @+1 {{nn.add: operand 1 has element type f32, expected ui8 like operand 0}}
  %0 = nn.add %a, %b : (tensor<4xui8>, tensor<4xf32>) -> tensor<4xui8>
  func.return
}

// -----

func.func @add_of_quantized(%a: tensor<4xui8>) {
  // expected-error @+1 {{nn.add: computes on floats (bf16, f16, f32, f64), got ui8 data; quantized data needs nn.dequantize first or a quantized op}}
  %0 = nn.add %a, %a : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  func.return
}

// -----

func.func @conv_of_quantized(%x: tensor<1x2x3x3xi8>, %w: tensor<2x2x1x1xi8>) {
  // expected-error @+1 {{nn.conv2d: computes on floats (bf16, f16, f32, f64), got i8 data}}
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x2x3x3xi8>, tensor<2x2x1x1xi8>) -> tensor<1x2x3x3xi8>
  func.return
}

// -----

func.func @signed_type(%a: tensor<4xsi8>) {
  // expected-error @+1 {{nn.relu: operand 0 has element type si8; nn ops compute on bf16, f16, f32 or f64 and hold quantized data as ui8 or i8 (i32 for biases), masks as i1 and indices as i64 (write signed 8-bit data as i8, read as signed like ONNX's int8)}}
  %0 = nn.relu %a : tensor<4xsi8>
  func.return
}

// -----

func.func @qconv_of_float(%x: tensor<1x2x3x3xf32>, %w: tensor<2x2x1x1xi8>) {
  // expected-error @+1 {{nn.qconv2d: x must be ui8 or i8, got f32}}
  %0 = nn.qconv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {w_scale = dense<0.5> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xi8>) -> tensor<1x2x3x3xui8>
  func.return
}

// -----

func.func @qconv_zero_point_type(%x: tensor<1x2x3x3xui8>, %w: tensor<2x2x1x1xi8>) {
  // expected-error @+1 {{nn.qconv2d: x_zero_point must have type tensor<ui8> like x's element type and x_scale's shape, got tensor<i8>}}
  %0 = nn.qconv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {w_scale = dense<0.5> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<i8>, y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : (tensor<1x2x3x3xui8>, tensor<2x2x1x1xi8>) -> tensor<1x2x3x3xui8>
  func.return
}

// -----

func.func @qconv_per_channel_length(%x: tensor<1x2x3x3xui8>, %w: tensor<2x2x1x1xi8>) {
  // expected-error @+1 {{nn.qconv2d: w_scale must be a scalar or 2 values of f32, got tensor<3xf32>}}
  %0 = nn.qconv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {w_scale = dense<[0.5, 1.0, 2.0]> : tensor<3xf32>, w_zero_point = dense<0> : tensor<3xi8>, x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : (tensor<1x2x3x3xui8>, tensor<2x2x1x1xi8>) -> tensor<1x2x3x3xui8>
  func.return
}

// -----

func.func @qconv_per_channel_x(%x: tensor<1x2x3x3xui8>, %w: tensor<2x2x1x1xi8>) {
  // expected-error @+1 {{nn.qconv2d: x_scale must be a scalar of f32, got tensor<2xf32>}}
  %0 = nn.qconv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {w_scale = dense<0.5> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.5> : tensor<2xf32>, x_zero_point = dense<10> : tensor<2xui8>, y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : (tensor<1x2x3x3xui8>, tensor<2x2x1x1xi8>) -> tensor<1x2x3x3xui8>
  func.return
}

// -----

func.func @qconv_bias_type(%x: tensor<1x2x3x3xui8>, %w: tensor<2x2x1x1xi8>, %b: tensor<2xf64>) {
  // expected-error @+1 {{nn.qconv2d: the bias must be i32 or f32, got f64}}
  %0 = nn.qconv2d %x, %w, %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {w_scale = dense<0.5> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : (tensor<1x2x3x3xui8>, tensor<2x2x1x1xi8>, tensor<2xf64>) -> tensor<1x2x3x3xui8>
  func.return
}

// -----

func.func @qconv_clamp(%x: tensor<1x2x3x3xui8>, %w: tensor<2x2x1x1xi8>) {
  // expected-error @+1 {{nn.qconv2d: clamp_min 300 is outside ui8's range 0..255}}
  %0 = nn.qconv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {clamp_min = 300 : i64, w_scale = dense<0.5> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : (tensor<1x2x3x3xui8>, tensor<2x2x1x1xi8>) -> tensor<1x2x3x3xui8>
  func.return
}

// -----

func.func @quantize_scale(%x: tensor<4xf32>) {
  // expected-error @+1 {{nn.quantize: y_scale must be positive and finite, got [0.0]}}
  %0 = nn.quantize %x {y_scale = dense<0.0> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : tensor<4xf32> -> tensor<4xui8>
  func.return
}

// -----

func.func @quantize_result(%x: tensor<4xf32>) {
  // expected-error @+1 {{nn.quantize: the result must be ui8 or i8, got i32}}
  %0 = nn.quantize %x {y_scale = dense<1.0> : tensor<f32>, y_zero_point = dense<0> : tensor<i32>} : tensor<4xf32> -> tensor<4xi32>
  func.return
}

// -----

func.func @quantize_no_axis(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{nn.quantize: a 1-D y_scale needs an axis}}
  %0 = nn.quantize %x {y_scale = dense<[1.0, 2.0]> : tensor<2xf32>, y_zero_point = dense<0> : tensor<2xui8>} : tensor<2x4xf32> -> tensor<2x4xui8>
  func.return
}

// -----

func.func @quantize_axis_length(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{nn.quantize: y_scale must be a scalar or 4 values of f32, got tensor<2xf32>}}
  %0 = nn.quantize %x {axis = 1 : i64, y_scale = dense<[1.0, 2.0]> : tensor<2xf32>, y_zero_point = dense<0> : tensor<2xui8>} : tensor<2x4xf32> -> tensor<2x4xui8>
  func.return
}

// -----

func.func @dequantize_i32_zero_point(%x: tensor<4xi32>) {
  // expected-error @+1 {{nn.dequantize: an i32 input has zero point 0 (ONNX)}}
  %0 = nn.dequantize %x {x_scale = dense<1.0> : tensor<f32>, x_zero_point = dense<3> : tensor<i32>} : tensor<4xi32> -> tensor<4xf32>
  func.return
}

// -----

func.func @dequantize_missing(%x: tensor<4xui8>) {
  // expected-error @+1 {{property 'x_zero_point' expected in operation 'nn.dequantize'}}
  %0 = nn.dequantize %x {x_scale = dense<1.0> : tensor<f32>} : tensor<4xui8> -> tensor<4xf32>
  func.return
}

// -----

func.func @qadd_mixed(%a: tensor<4xui8>, %b: tensor<4xi8>) {
  // expected-error @+1 {{nn.qadd: rhs must be ui8, got i8}}
  %0 = nn.qadd %a, %b {a_scale = dense<1.0> : tensor<f32>, a_zero_point = dense<0> : tensor<ui8>, b_scale = dense<1.0> : tensor<f32>, b_zero_point = dense<0> : tensor<i8>, y_scale = dense<1.0> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : (tensor<4xui8>, tensor<4xi8>) -> tensor<4xui8>
  func.return
}

// -----

func.func @qconcat_scales(%a: tensor<1x2xui8>) {
  // expected-error @+1 {{nn.qconcat: x_scale must hold one f32 per input (2), got tensor<f32>}}
  %0 = nn.qconcat %a, %a axis 1 {x_scale = dense<1.0> : tensor<f32>, x_zero_point = dense<3> : tensor<ui8>, y_scale = dense<1.0> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : (tensor<1x2xui8>, tensor<1x2xui8>) -> tensor<1x4xui8>
  func.return
}

// -----

func.func @pad_value(%a: tensor<1x2xui8>) {
  // expected-error @+1 {{nn.pad: value 0.5 is not a ui8 number (0 to 255); a quantized tensor's pad value is an integer, its zero point for a 0}}
  %0 = nn.pad %a pads [0, 1, 0, 1] mode "constant" value 0.5 : tensor<1x2xui8> -> tensor<1x4xui8>
  func.return
}

// -----

func.func @resize_linear(%a: tensor<1x1x2x2xui8>) {
  // expected-error @+1 {{nn.resize: linear mode interpolates, which ui8 data cannot do exactly; resize quantized data in nearest mode or dequantize first}}
  %0 = nn.resize %a mode "linear" coordinates "half_pixel" nearest "round_prefer_floor" scales [2.0, 2.0] : tensor<1x1x2x2xui8> -> tensor<1x1x4x4xui8>
  func.return
}

// -----

func.func @qconv_add_addend_type(%x: tensor<1x2x3x3xui8>, %w: tensor<2x2x1x1xi8>, %r: tensor<1x2x3x3xi8>) -> tensor<1x2x3x3xui8> {
  // expected-error @+1 {{nn.qconv2d_add: the addend must be ui8, got i8}}
  %0 = nn.qconv2d_add %x, %w add %r strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {c_scale = dense<2.0> : tensor<f32>, c_zero_point = dense<10> : tensor<ui8>, r_scale = dense<1.0> : tensor<f32>, r_zero_point = dense<1> : tensor<ui8>, w_scale = dense<0.5> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : (tensor<1x2x3x3xui8>, tensor<2x2x1x1xi8>, tensor<1x2x3x3xi8>) -> tensor<1x2x3x3xui8>
  func.return %0 : tensor<1x2x3x3xui8>
}

// -----

func.func @qconv_add_addend_shape(%x: tensor<1x2x3x3xui8>, %w: tensor<2x2x1x1xi8>, %r: tensor<1x2x1x1xui8>) -> tensor<1x2x3x3xui8> {
  // expected-error @+1 {{nn.qconv2d_add: addend shape [1, 2, 1, 1] is not the result shape [1, 2, 3, 3]}}
  %0 = nn.qconv2d_add %x, %w add %r strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {c_scale = dense<2.0> : tensor<f32>, c_zero_point = dense<10> : tensor<ui8>, r_scale = dense<1.0> : tensor<f32>, r_zero_point = dense<1> : tensor<ui8>, w_scale = dense<0.5> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : (tensor<1x2x3x3xui8>, tensor<2x2x1x1xi8>, tensor<1x2x1x1xui8>) -> tensor<1x2x3x3xui8>
  func.return %0 : tensor<1x2x3x3xui8>
}

// -----

func.func @qconv_add_clamp(%x: tensor<1x2x3x3xui8>, %w: tensor<2x2x1x1xi8>, %r: tensor<1x2x3x3xui8>) -> tensor<1x2x3x3xui8> {
  // expected-error @+1 {{nn.qconv2d_add: clamp_min -1 is outside ui8's range 0..255}}
  %0 = nn.qconv2d_add %x, %w add %r strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {c_scale = dense<2.0> : tensor<f32>, c_zero_point = dense<10> : tensor<ui8>, clamp_min = -1 : i64, r_scale = dense<1.0> : tensor<f32>, r_zero_point = dense<1> : tensor<ui8>, w_scale = dense<0.5> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : (tensor<1x2x3x3xui8>, tensor<2x2x1x1xi8>, tensor<1x2x3x3xui8>) -> tensor<1x2x3x3xui8>
  func.return %0 : tensor<1x2x3x3xui8>
}

// -----

func.func @qconv_add_half_of_c(%x: tensor<1x2x3x3xui8>, %w: tensor<2x2x1x1xi8>, %r: tensor<1x2x3x3xui8>) -> tensor<1x2x3x3xui8> {
  // expected-error @+1 {{nn.qconv2d_add: c_scale and c_zero_point come together (both, or neither: one rounding)}}
  %0 = nn.qconv2d_add %x, %w add %r strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {c_scale = dense<2.0> : tensor<f32>, r_scale = dense<1.0> : tensor<f32>, r_zero_point = dense<1> : tensor<ui8>, w_scale = dense<0.5> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : (tensor<1x2x3x3xui8>, tensor<2x2x1x1xi8>, tensor<1x2x3x3xui8>) -> tensor<1x2x3x3xui8>
  func.return %0 : tensor<1x2x3x3xui8>
}

// -----

func.func @qconv_add_once_clamp(%x: tensor<1x2x3x3xui8>, %w: tensor<2x2x1x1xi8>, %r: tensor<1x2x3x3xui8>) -> tensor<1x2x3x3xui8> {
  // expected-error @+1 {{nn.qconv2d_add: clamp_max 300 is outside ui8's range 0..255}}
  %0 = nn.qconv2d_add %x, %w add %r strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {clamp_max = 300 : i64, r_scale = dense<1.0> : tensor<f32>, r_zero_point = dense<1> : tensor<ui8>, w_scale = dense<0.5> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : (tensor<1x2x3x3xui8>, tensor<2x2x1x1xi8>, tensor<1x2x3x3xui8>) -> tensor<1x2x3x3xui8>
  func.return %0 : tensor<1x2x3x3xui8>
}

// -----

func.func @qconv_to_float_result(%x: tensor<1x2x3x3xui8>, %w: tensor<2x2x1x1xi8>) -> tensor<1x2x3x3xui8> {
  // expected-error @+1 {{nn.qconv2d_to_float: the result must be f32, got ui8}}
  %0 = nn.qconv2d_to_float %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {w_scale = dense<0.5> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>} : (tensor<1x2x3x3xui8>, tensor<2x2x1x1xi8>) -> tensor<1x2x3x3xui8>
  func.return %0 : tensor<1x2x3x3xui8>
}

// -----

func.func @qresize_nearest(%x: tensor<1x2x4x4xui8>) -> tensor<1x2x8x8xui8> {
  // expected-error @+1 {{nn.qresize: mode must be linear, got nearest (a nearest resize of quantized data is nn.resize)}}
  %y = nn.qresize %x mode "nearest" coordinates "half_pixel" nearest "floor" scales [2.0, 2.0] {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<3> : tensor<ui8>, y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<3> : tensor<ui8>} : tensor<1x2x4x4xui8> -> tensor<1x2x8x8xui8>
  func.return %y : tensor<1x2x8x8xui8>
}

// -----

func.func @qresize_types(%x: tensor<1x2x4x4xui8>) -> tensor<1x2x8x8xi8> {
  // expected-error @+1 {{nn.qresize: the result must be ui8, got i8}}
  %y = nn.qresize %x mode "linear" coordinates "half_pixel" nearest "floor" scales [2.0, 2.0] {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<3> : tensor<ui8>, y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<3> : tensor<i8>} : tensor<1x2x4x4xui8> -> tensor<1x2x8x8xi8>
  func.return %y : tensor<1x2x8x8xi8>
}

// -----

func.func @qresize_shape(%x: tensor<1x2x4x4xui8>) -> tensor<1x3x8x8xui8> {
  // expected-error @+1 {{nn.qresize: result [1, 3, 8, 8] must keep the input's N and C [1, 2]; only the spatial axes are resized}}
  %y = nn.qresize %x mode "linear" coordinates "half_pixel" nearest "floor" scales [2.0, 2.0] {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<3> : tensor<ui8>, y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<3> : tensor<ui8>} : tensor<1x2x4x4xui8> -> tensor<1x3x8x8xui8>
  func.return %y : tensor<1x3x8x8xui8>
}

// -----

// A table's recorded function is one of the fused activations, with that op's attributes.
func.func @qlookup_unknown_function(%x: tensor<1x2x2x2xui8>) -> tensor<1x2x2x2xui8> {
  // expected-error @+1 {{nn.qlookup: unknown activation "softsign"; expected one of relu, leaky_relu, clip, sigmoid, tanh, hardswish, hardsigmoid, gelu, swish, elu, softplus, mish}}
  %0 = nn.qlookup %x {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>, table = dense<0> : tensor<256xui8>, activation = "softsign"} : tensor<1x2x2x2xui8> -> tensor<1x2x2x2xui8>
  func.return %0 : tensor<1x2x2x2xui8>
}

// -----

func.func @qlookup_function_attribute(%x: tensor<1x2x2x2xui8>) -> tensor<1x2x2x2xui8> {
  // expected-error @+1 {{nn.qlookup: 'alpha' does not apply to activation "hardswish"}}
  %0 = nn.qlookup %x {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>, table = dense<0> : tensor<256xui8>, activation = "hardswish", alpha = 0.5 : f32} : tensor<1x2x2x2xui8> -> tensor<1x2x2x2xui8>
  func.return %0 : tensor<1x2x2x2xui8>
}

// -----

func.func @qlookup_attribute_without_function(%x: tensor<1x2x2x2xui8>) -> tensor<1x2x2x2xui8> {
  // expected-error @+1 {{nn.qlookup: 'min' is given but there is no activation}}
  %0 = nn.qlookup %x {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>, table = dense<0> : tensor<256xui8>, min = 0.0 : f32} : tensor<1x2x2x2xui8> -> tensor<1x2x2x2xui8>
  func.return %0 : tensor<1x2x2x2xui8>
}

// -----

func.func @qavg_pool2d_result_of_another_type(%x: tensor<1x2x4x4xui8>) -> tensor<1x2x4x4xi8> {
  // expected-error @+1 {{nn.qavg_pool2d: the result must be ui8, got i8}}
  %0 = nn.qavg_pool2d %x kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] count_include_pad {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<10> : tensor<i8>} : tensor<1x2x4x4xui8> -> tensor<1x2x4x4xi8>
  func.return %0 : tensor<1x2x4x4xi8>
}

// -----

func.func @qavg_pool2d_of_floats(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{nn.qavg_pool2d: the input must be ui8 or i8, got f32}}
  %0 = nn.qavg_pool2d %x kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}

// -----

func.func @qconv_unknown_activation(%x: tensor<1x2x3x3xui8>, %w: tensor<2x2x1x1xi8>) -> tensor<1x2x3x3xui8> {
  // expected-error @+1 {{nn.qconv2d: unknown activation "exp"; expected one of}}
  %0 = nn.qconv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 activation "exp" {w_scale = dense<0.5> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : (tensor<1x2x3x3xui8>, tensor<2x2x1x1xi8>) -> tensor<1x2x3x3xui8>
  func.return %0 : tensor<1x2x3x3xui8>
}

// -----

func.func @qconv_activation_attribute(%x: tensor<1x2x3x3xui8>, %w: tensor<2x2x1x1xi8>) -> tensor<1x2x3x3xui8> {
  // expected-error @+1 {{nn.qconv2d: 'alpha' is given but there is no activation}}
  %0 = nn.qconv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 alpha 0.5 {w_scale = dense<0.5> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : (tensor<1x2x3x3xui8>, tensor<2x2x1x1xi8>) -> tensor<1x2x3x3xui8>
  func.return %0 : tensor<1x2x3x3xui8>
}

// -----

func.func @qmatmul_nnan(%a: tensor<3x2xui8>, %b: tensor<2x4xi8>) -> tensor<3x4xui8> {
  // expected-error @+1 {{nn.qmatmul: 'nnan' does not apply: the real result is never NaN}}
  %0 = nn.qmatmul %a, %b activation "relu" nnan {a_scale = dense<0.5> : tensor<f32>, a_zero_point = dense<131> : tensor<ui8>, b_scale = dense<0.25> : tensor<f32>, b_zero_point = dense<0> : tensor<i8>, y_scale = dense<0.25> : tensor<f32>, y_zero_point = dense<7> : tensor<ui8>} : (tensor<3x2xui8>, tensor<2x4xi8>) -> tensor<3x4xui8>
  func.return %0 : tensor<3x4xui8>
}

// -----

func.func @qbatch_norm_of_floats(%x: tensor<1x2x2x2xf32>, %g: tensor<2xf32>) -> tensor<1x2x2x2xui8> {
  // expected-error @+1 {{nn.qbatch_norm: the input must be ui8 or i8, got f32}}
  %0 = nn.qbatch_norm %x, %g, %g, %g, %g epsilon 1.0e-05 {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<3> : tensor<ui8>, y_scale = dense<0.25> : tensor<f32>, y_zero_point = dense<7> : tensor<ui8>} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xui8>
  func.return %0 : tensor<1x2x2x2xui8>
}

// -----

func.func @qbatch_norm_vector_shape(%x: tensor<1x2x2x2xui8>, %g: tensor<2xf32>, %m: tensor<3xf32>) -> tensor<1x2x2x2xui8> {
  // expected-error @+1 {{nn.qbatch_norm: mean must have shape [2] (the input's channels), got [3]}}
  %0 = nn.qbatch_norm %x, %g, %g, %m, %g epsilon 1.0e-05 {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<3> : tensor<ui8>, y_scale = dense<0.25> : tensor<f32>, y_zero_point = dense<7> : tensor<ui8>} : (tensor<1x2x2x2xui8>, tensor<2xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>) -> tensor<1x2x2x2xui8>
  func.return %0 : tensor<1x2x2x2xui8>
}
