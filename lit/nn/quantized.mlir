// Round trip of the quantized ops (nn.quantize, nn.dequantize, nn.qconv2d, nn.qmatmul, nn.qadd,
// nn.qmul, nn.qglobal_avg_pool, nn.qconcat) and of type-agnostic ops on ui8/i8 data, in the
// pretty and the generic form.
// RUN: nnlayout-opt %s | filecheck %s
// RUN: nnlayout-opt %s --print-op-generic | nnlayout-opt | filecheck %s

func.func @qdq(%x: tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %q = nn.quantize %x {y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<128> : tensor<ui8>} : tensor<1x4x3x3xf32> -> tensor<1x4x3x3xui8>
  %p = nn.quantize %x {axis = 1 : i64, y_scale = dense<[0.5, 0.25, 1.0, 2.0]> : tensor<4xf32>, y_zero_point = dense<[0, 1, -2, 3]> : tensor<4xi8>} : tensor<1x4x3x3xf32> -> tensor<1x4x3x3xi8>
  %d = nn.dequantize %q {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<1x4x3x3xui8> -> tensor<1x4x3x3xf32>
  func.return %d : tensor<1x4x3x3xf32>
}
// CHECK-LABEL: func.func @qdq
// CHECK-NEXT: %q = nn.quantize %x {y_scale = dense<5.000000e-01> : tensor<f32>, y_zero_point = dense<128> : tensor<ui8>} : tensor<1x4x3x3xf32> -> tensor<1x4x3x3xui8>
// CHECK-NEXT: %p = nn.quantize %x {axis = 1 : i64, y_scale = dense<[5.000000e-01, 2.500000e-01, 1.000000e+00, 2.000000e+00]> : tensor<4xf32>, y_zero_point = dense<[0, 1, -2, 3]> : tensor<4xi8>} : tensor<1x4x3x3xf32> -> tensor<1x4x3x3xi8>
// CHECK-NEXT: %d = nn.dequantize %q {x_scale = dense<5.000000e-01> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<1x4x3x3xui8> -> tensor<1x4x3x3xf32>

func.func @qops(%x: tensor<1x4x3x3xui8>, %w: tensor<2x4x3x3xi8>, %b: tensor<2xi32>, %m: tensor<3x2xi8>, %c: tensor<2xi32>) -> tensor<1x2x3x3xui8> {
  %y = nn.qconv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {clamp_min = 10 : i64, w_scale = dense<[0.5, 0.25]> : tensor<2xf32>, w_zero_point = dense<0> : tensor<2xi8>, x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : (tensor<1x4x3x3xui8>, tensor<2x4x3x3xi8>, tensor<2xi32>) -> tensor<1x2x3x3xui8>
  %a = nn.qadd %y, %y {a_scale = dense<2.0> : tensor<f32>, a_zero_point = dense<10> : tensor<ui8>, b_scale = dense<2.0> : tensor<f32>, b_zero_point = dense<10> : tensor<ui8>, y_scale = dense<4.0> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : (tensor<1x2x3x3xui8>, tensor<1x2x3x3xui8>) -> tensor<1x2x3x3xui8>
  %u = nn.qmul %a, %y {a_scale = dense<4.0> : tensor<f32>, a_zero_point = dense<0> : tensor<ui8>, b_scale = dense<2.0> : tensor<f32>, b_zero_point = dense<10> : tensor<ui8>, y_scale = dense<4.0> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : (tensor<1x2x3x3xui8>, tensor<1x2x3x3xui8>) -> tensor<1x2x3x3xui8>
  %mp = nn.max_pool2d %u kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x2x3x3xui8> -> tensor<1x2x3x3xui8>
  %g = nn.qglobal_avg_pool %mp {x_scale = dense<4.0> : tensor<f32>, x_zero_point = dense<0> : tensor<ui8>, y_scale = dense<1.0> : tensor<f32>, y_zero_point = dense<3> : tensor<ui8>} : tensor<1x2x3x3xui8> -> tensor<1x2x1x1xui8>
  %f = nn.flatten %g axis 1 : tensor<1x2x1x1xui8> -> tensor<1x2xui8>
  %k = nn.qconcat %f, %f axis 1 {x_scale = dense<[1.0, 2.0]> : tensor<2xf32>, x_zero_point = dense<[3, 4]> : tensor<2xui8>, y_scale = dense<1.0> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : (tensor<1x2xui8>, tensor<1x2xui8>) -> tensor<1x4xui8>
  %r = nn.reshape %k : tensor<1x4xui8> -> tensor<4x1xui8>
  %t = nn.transpose %r perm [1, 0] : tensor<4x1xui8> -> tensor<1x4xui8>
  %s = nn.slice %t starts [0, 0] sizes [1, 3] steps [1, 1] : tensor<1x4xui8> -> tensor<1x3xui8>
  %mm = nn.qmatmul %s, %m, %c {a_scale = dense<1.0> : tensor<f32>, a_zero_point = dense<0> : tensor<ui8>, b_scale = dense<[0.5, 0.25]> : tensor<2xf32>, b_zero_point = dense<0> : tensor<2xi8>, y_scale = dense<1.0> : tensor<f32>, y_zero_point = dense<0> : tensor<i8>} : (tensor<1x3xui8>, tensor<3x2xi8>, tensor<2xi32>) -> tensor<1x2xi8>
  func.return %y : tensor<1x2x3x3xui8>
}
// CHECK-LABEL: func.func @qops
// CHECK-NEXT: %y = nn.qconv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {clamp_min = 10 : i64, w_scale = dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>, w_zero_point = dense<0> : tensor<2xi8>, x_scale = dense<5.000000e-01> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<2.000000e+00> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : (tensor<1x4x3x3xui8>, tensor<2x4x3x3xi8>, tensor<2xi32>) -> tensor<1x2x3x3xui8>
// CHECK-NEXT: %a = nn.qadd %y, %y {a_scale
// CHECK-NEXT: %u = nn.qmul %a, %y {a_scale
// CHECK-NEXT: %mp = nn.max_pool2d %u kernel [3, 3] {{.*}} : tensor<1x2x3x3xui8> -> tensor<1x2x3x3xui8>
// CHECK-NEXT: %g = nn.qglobal_avg_pool %mp {x_scale = dense<4.000000e+00> : tensor<f32>, x_zero_point = dense<0> : tensor<ui8>, y_scale = dense<1.000000e+00> : tensor<f32>, y_zero_point = dense<3> : tensor<ui8>} : tensor<1x2x3x3xui8> -> tensor<1x2x1x1xui8>
// CHECK-NEXT: %f = nn.flatten %g axis 1 : tensor<1x2x1x1xui8> -> tensor<1x2xui8>
// CHECK-NEXT: %k = nn.qconcat %f, %f axis 1 {x_scale = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>, x_zero_point = dense<[3, 4]> : tensor<2xui8>, {{.*}}} : (tensor<1x2xui8>, tensor<1x2xui8>) -> tensor<1x4xui8>
// CHECK: %mm = nn.qmatmul %s, %m, %c {a_scale

// nn.qconv2d with an activation of its real result (fold-qdq's, from torch's x86 exports).
func.func @qconv_activation(%x: tensor<1x4x3x3xui8>, %w: tensor<2x4x3x3xi8>, %b: tensor<2xf32>) -> tensor<1x2x3x3xui8> {
  %y = nn.qconv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "gelu" approximate "tanh" {w_scale = dense<0.5> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : (tensor<1x4x3x3xui8>, tensor<2x4x3x3xi8>, tensor<2xf32>) -> tensor<1x2x3x3xui8>
  func.return %y : tensor<1x2x3x3xui8>
}
// CHECK-LABEL: func.func @qconv_activation
// CHECK-NEXT: %y = nn.qconv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "gelu" approximate "tanh" {w_scale = dense<5.000000e-01> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<5.000000e-01> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<2.000000e+00> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : (tensor<1x4x3x3xui8>, tensor<2x4x3x3xi8>, tensor<2xf32>) -> tensor<1x2x3x3xui8>

// nn.qmatmul with a bias and an activation of its real result (fold-qdq's Linear -> GELU).
func.func @qmatmul_activation(%a: tensor<1x3x2xui8>, %b: tensor<2x4xi8>, %c: tensor<4xf32>) -> tensor<1x3x4xui8> {
  %y = nn.qmatmul %a, %b, %c activation "swish" {a_scale = dense<0.5> : tensor<f32>, a_zero_point = dense<131> : tensor<ui8>, b_scale = dense<0.25> : tensor<f32>, b_zero_point = dense<0> : tensor<i8>, y_scale = dense<0.25> : tensor<f32>, y_zero_point = dense<7> : tensor<ui8>} : (tensor<1x3x2xui8>, tensor<2x4xi8>, tensor<4xf32>) -> tensor<1x3x4xui8>
  func.return %y : tensor<1x3x4xui8>
}
// CHECK-LABEL: func.func @qmatmul_activation
// CHECK-NEXT: %y = nn.qmatmul %a, %b, %c activation "swish" {a_scale = dense<5.000000e-01> : tensor<f32>, a_zero_point = dense<131> : tensor<ui8>, b_scale = dense<2.500000e-01> : tensor<f32>, b_zero_point = dense<0> : tensor<i8>, y_scale = dense<2.500000e-01> : tensor<f32>, y_zero_point = dense<7> : tensor<ui8>} : (tensor<1x3x2xui8>, tensor<2x4xi8>, tensor<4xf32>) -> tensor<1x3x4xui8>

// nn.qconv2d_add (fuse-post-ops' int8 convolution and residual add), with and without bias.
func.func @qconv_add(%x: tensor<1x4x3x3xui8>, %w: tensor<2x4x3x3xi8>, %b: tensor<2xi32>, %r: tensor<1x2x3x3xui8>) -> tensor<1x2x3x3xui8> {
  %y = nn.qconv2d_add %x, %w, %b add %r strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {c_scale = dense<2.0> : tensor<f32>, c_zero_point = dense<10> : tensor<ui8>, r_scale = dense<1.0> : tensor<f32>, r_zero_point = dense<120> : tensor<ui8>, w_scale = dense<[0.5, 0.25]> : tensor<2xf32>, w_zero_point = dense<0> : tensor<2xi8>, x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<4.0> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : (tensor<1x4x3x3xui8>, tensor<2x4x3x3xi8>, tensor<2xi32>, tensor<1x2x3x3xui8>) -> tensor<1x2x3x3xui8>
  %z = nn.qconv2d_add %x, %w add %y strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {c_scale = dense<2.0> : tensor<f32>, c_zero_point = dense<-3> : tensor<i8>, clamp_min = -3 : i64, r_scale = dense<4.0> : tensor<f32>, r_zero_point = dense<0> : tensor<ui8>, w_scale = dense<0.5> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<4.0> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : (tensor<1x4x3x3xui8>, tensor<2x4x3x3xi8>, tensor<1x2x3x3xui8>) -> tensor<1x2x3x3xui8>
  func.return %z : tensor<1x2x3x3xui8>
}
// CHECK-LABEL: func.func @qconv_add
// CHECK-NEXT: %y = nn.qconv2d_add %x, %w, %b add %r strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {c_scale = dense<2.000000e+00> : tensor<f32>, c_zero_point = dense<10> : tensor<ui8>, r_scale = dense<1.000000e+00> : tensor<f32>, r_zero_point = dense<120> : tensor<ui8>, w_scale = {{.*}}, y_zero_point = dense<0> : tensor<ui8>} : (tensor<1x4x3x3xui8>, tensor<2x4x3x3xi8>, tensor<2xi32>, tensor<1x2x3x3xui8>) -> tensor<1x2x3x3xui8>
// CHECK-NEXT: %z = nn.qconv2d_add %x, %w add %y strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {c_scale = dense<2.000000e+00> : tensor<f32>, c_zero_point = dense<-3> : tensor<i8>, clamp_min = -3 : i64, {{.*}}} : (tensor<1x4x3x3xui8>, tensor<2x4x3x3xi8>, tensor<1x2x3x3xui8>) -> tensor<1x2x3x3xui8>

// nn.qconv2d_to_float: a quantized convolution with a real (f32) result (fold-qdq's form of a
// dequantize -> Conv whose result stays float).
func.func @qconv_to_float(%x: tensor<1x4x3x3xui8>, %w: tensor<2x4x3x3xi8>, %b: tensor<2xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %y = nn.qconv2d_to_float %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {w_scale = dense<[0.5, 0.25]> : tensor<2xf32>, w_zero_point = dense<0> : tensor<2xi8>, x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>} : (tensor<1x4x3x3xui8>, tensor<2x4x3x3xi8>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %h = nn.qconv2d_to_float %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "hardswish" {w_scale = dense<0.5> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>} : (tensor<1x4x3x3xui8>, tensor<2x4x3x3xi8>) -> tensor<1x2x3x3xf32>
  func.return %y, %h : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}
// CHECK-LABEL: func.func @qconv_to_float
// CHECK-NEXT: %y = nn.qconv2d_to_float %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {w_scale = dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>, w_zero_point = dense<0> : tensor<2xi8>, x_scale = dense<5.000000e-01> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>} : (tensor<1x4x3x3xui8>, tensor<2x4x3x3xi8>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT: %h = nn.qconv2d_to_float %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "hardswish" {w_scale = dense<5.000000e-01> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<5.000000e-01> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>} : (tensor<1x4x3x3xui8>, tensor<2x4x3x3xi8>) -> tensor<1x2x3x3xf32>

// nn.qresize: a linear resize of quantized data (fold-qdq's form of onnxruntime's QDQ Resize).
func.func @qresize(%x: tensor<1x2x4x4xi8>) -> tensor<1x2x8x8xi8> {
  %y = nn.qresize %x mode "linear" coordinates "half_pixel" nearest "floor" scales [2.0, 2.0] {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<3> : tensor<i8>, y_scale = dense<0.25> : tensor<f32>, y_zero_point = dense<-3> : tensor<i8>} : tensor<1x2x4x4xi8> -> tensor<1x2x8x8xi8>
  func.return %y : tensor<1x2x8x8xi8>
}
// CHECK-LABEL: func.func @qresize
// CHECK-NEXT: %y = nn.qresize %x mode "linear" coordinates "half_pixel" nearest "floor" scales [2.000000e+00, 2.000000e+00] {x_scale = dense<5.000000e-01> : tensor<f32>, x_zero_point = dense<3> : tensor<i8>, y_scale = dense<2.500000e-01> : tensor<f32>, y_zero_point = dense<-3> : tensor<i8>} : tensor<1x2x4x4xi8> -> tensor<1x2x8x8xi8>

// Without c (fold-qdq's form of torch's x86 residual blocks): one rounding, the clamp on y.
func.func @qconv_add_once(%x: tensor<1x4x3x3xui8>, %w: tensor<2x4x3x3xi8>, %b: tensor<2xf32>, %r: tensor<1x2x3x3xui8>) -> tensor<1x2x3x3xui8> {
  %y = nn.qconv2d_add %x, %w, %b add %r strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {clamp_min = 7 : i64, r_scale = dense<1.0> : tensor<f32>, r_zero_point = dense<120> : tensor<ui8>, w_scale = dense<[0.5, 0.25]> : tensor<2xf32>, w_zero_point = dense<0> : tensor<2xi8>, x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<4.0> : tensor<f32>, y_zero_point = dense<7> : tensor<ui8>} : (tensor<1x4x3x3xui8>, tensor<2x4x3x3xi8>, tensor<2xf32>, tensor<1x2x3x3xui8>) -> tensor<1x2x3x3xui8>
  func.return %y : tensor<1x2x3x3xui8>
}
// CHECK-LABEL: func.func @qconv_add_once
// CHECK-NEXT: %y = nn.qconv2d_add %x, %w, %b add %r strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {clamp_min = 7 : i64, r_scale = dense<1.000000e+00> : tensor<f32>, {{.*}}} : (tensor<1x4x3x3xui8>, tensor<2x4x3x3xi8>, tensor<2xf32>, tensor<1x2x3x3xui8>) -> tensor<1x2x3x3xui8>
// CHECK-NOT: c_scale
