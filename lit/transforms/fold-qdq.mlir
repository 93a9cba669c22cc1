// fold-qdq: dequantize -> float op -> quantize becomes the quantized op; what does not match
// stays float, with a remark saying why; default-pipeline runs it before select-dispatch.
// RUN: nnlayout-opt %s --split-input-file -p fold-qdq | filecheck %s
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics -p 'fold-qdq{remarks=true}'
// RUN: nnlayout-opt %s --split-input-file -p 'default-pipeline{target=avx2}' | filecheck %s --check-prefix=PIPE

// conv (per-channel weights, i32 bias) -> relu -> quantize: one qconv2d clamped at y's zero point.
func.func @conv_relu(%x: tensor<1x3x4x4xui8>) -> tensor<1x2x4x4xui8> {
  %wq = nn.constant dense<[[[[1, -2, 3], [4, 5, -6], [7, 8, 9]], [[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[-1, -2, -3], [-4, -5, -6], [-7, -8, -9]]], [[[2, 2, 2], [2, 2, 2], [2, 2, 2]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]], [[0, 0, 0], [0, 0, 0], [0, 0, 0]]]]> : tensor<2x3x3x3xi8>
  %bq = nn.constant dense<[100, -200]> : tensor<2xi32>
  %xf = nn.dequantize %x {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<1x3x4x4xui8> -> tensor<1x3x4x4xf32>
  %wf = nn.dequantize %wq {axis = 0 : i64, x_scale = dense<[0.25, 0.125]> : tensor<2xf32>, x_zero_point = dense<0> : tensor<2xi8>} : tensor<2x3x3x3xi8> -> tensor<2x3x3x3xf32>
  %bf = nn.dequantize %bq {axis = 0 : i64, x_scale = dense<[0.125, 0.0625]> : tensor<2xf32>, x_zero_point = dense<0> : tensor<2xi32>} : tensor<2xi32> -> tensor<2xf32>
  %c = nn.conv2d %xf, %wf, %bf strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x4x4xf32>, tensor<2x3x3x3xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %r = nn.relu %c : tensor<1x2x4x4xf32>
  %y = nn.quantize %r {y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xui8>
  func.return %y : tensor<1x2x4x4xui8>
}
// CHECK-LABEL: func.func @conv_relu
// CHECK-NOT:  nn.dequantize
// CHECK:      %y = nn.qconv2d %x, %wq, %bq strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {x_scale = dense<5.000000e-01> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>, w_scale = dense<[2.500000e-01, 1.250000e-01]> : tensor<2xf32>, w_zero_point = dense<0> : tensor<2xi8>, y_scale = dense<2.000000e+00> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>, clamp_min = 10 : i64} : (tensor<1x3x4x4xui8>, tensor<2x3x3x3xi8>, tensor<2xi32>) -> tensor<1x2x4x4xui8>
// CHECK-NEXT: func.return %y
// PIPE-LABEL: func.func @conv_relu
// PIPE:       nn.qconv2d {{.*}}#nn.kernel<"qconv2d_ref"

// -----

// gemm (trans_b, i32 bias), add, global average pool, concat and max pool of equal parameters.
func.func @others(%a: tensor<2x4xui8>, %x: tensor<1x2x4x4xi8>) -> (tensor<2x3xui8>, tensor<1x4x4x4xi8>, tensor<1x2x1x1xi8>, tensor<1x2x2x2xi8>) {
  %bq = nn.constant dense<[[1, 2, 3, 4], [5, 6, 7, 8], [-1, -2, -3, -4]]> : tensor<3x4xi8>
  %cq = nn.constant dense<[7, 8, 9]> : tensor<3xi32>
  %af = nn.dequantize %a {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<3> : tensor<ui8>} : tensor<2x4xui8> -> tensor<2x4xf32>
  %bf = nn.dequantize %bq {x_scale = dense<0.25> : tensor<f32>, x_zero_point = dense<0> : tensor<i8>} : tensor<3x4xi8> -> tensor<3x4xf32>
  %cf = nn.dequantize %cq {x_scale = dense<0.125> : tensor<f32>, x_zero_point = dense<0> : tensor<i32>} : tensor<3xi32> -> tensor<3xf32>
  %g = nn.gemm %af, %bf, %cf trans_b alpha 1.0 beta 1.0 : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %gq = nn.quantize %g {y_scale = dense<1.0> : tensor<f32>, y_zero_point = dense<5> : tensor<ui8>} : tensor<2x3xf32> -> tensor<2x3xui8>
  %xf = nn.dequantize %x {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<-3> : tensor<i8>} : tensor<1x2x4x4xi8> -> tensor<1x2x4x4xf32>
  %s = nn.add %xf, %xf : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %sq = nn.quantize %s {y_scale = dense<1.0> : tensor<f32>, y_zero_point = dense<0> : tensor<i8>} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xi8>
  %sf = nn.dequantize %sq {x_scale = dense<1.0> : tensor<f32>, x_zero_point = dense<0> : tensor<i8>} : tensor<1x2x4x4xi8> -> tensor<1x2x4x4xf32>
  %k = nn.concat %xf, %sf axis 1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32>
  %kq = nn.quantize %k {y_scale = dense<1.0> : tensor<f32>, y_zero_point = dense<0> : tensor<i8>} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xi8>
  %p = nn.global_avg_pool %sf : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %pq = nn.quantize %p {y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<1> : tensor<i8>} : tensor<1x2x1x1xf32> -> tensor<1x2x1x1xi8>
  %m = nn.max_pool2d %xf kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  %mq = nn.quantize %m {y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<-3> : tensor<i8>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xi8>
  func.return %gq, %kq, %pq, %mq : tensor<2x3xui8>, tensor<1x4x4x4xi8>, tensor<1x2x1x1xi8>, tensor<1x2x2x2xi8>
}
// CHECK-LABEL: func.func @others
// CHECK:      %[[T:.*]] = nn.transpose %bq perm [1, 0] : tensor<3x4xi8> -> tensor<4x3xi8>
// CHECK-NEXT: %gq = nn.qmatmul %a, %[[T]], %cq {{.*}} : (tensor<2x4xui8>, tensor<4x3xi8>, tensor<3xi32>) -> tensor<2x3xui8>
// CHECK:      %sq = nn.qadd %x, %x {{.*}} : (tensor<1x2x4x4xi8>, tensor<1x2x4x4xi8>) -> tensor<1x2x4x4xi8>
// CHECK:      %kq = nn.qconcat %x, %sq axis 1 {x_scale = dense<[5.000000e-01, 1.000000e+00]> : tensor<2xf32>, x_zero_point = dense<[-3, 0]> : tensor<2xi8>, {{.*}}} : (tensor<1x2x4x4xi8>, tensor<1x2x4x4xi8>) -> tensor<1x4x4x4xi8>
// CHECK:      %pq = nn.qglobal_avg_pool %sq {{.*}} : tensor<1x2x4x4xi8> -> tensor<1x2x1x1xi8>
// CHECK:      %mq = nn.max_pool2d %x kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x2x4x4xi8> -> tensor<1x2x2x2xi8>
// CHECK-NOT:  nn.dequantize
// CHECK-NOT:  nn.quantize
// PIPE-LABEL: func.func @others
// PIPE-NOT:   nn.gemm
// PIPE-NOT:   nn.add

// -----

// A float constant bias (torch's pt2e exports): divided by x_scale * w_scale[o] at load (a
// constant nn.div), an f32 bias of the qconv2d in the accumulator's units.
func.func @float_bias(%x: tensor<1x2x4x4xui8>) -> tensor<1x2x4x4xui8> {
  %wq = nn.constant dense<1> : tensor<2x2x1x1xi8>
  %b = nn.constant dense<[0.3, -0.7]> : tensor<2xf32>
  %xf = nn.dequantize %x {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<1x2x4x4xui8> -> tensor<1x2x4x4xf32>
  %wf = nn.dequantize %wq {axis = 0 : i64, x_scale = dense<[0.25, 0.125]> : tensor<2xf32>, x_zero_point = dense<0> : tensor<2xi8>} : tensor<2x2x1x1xi8> -> tensor<2x2x1x1xf32>
  %c = nn.conv2d %xf, %wf, %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %cq = nn.quantize %c {y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xui8>
  func.return %cq : tensor<1x2x4x4xui8>
}
// CHECK-LABEL: func.func @float_bias
// CHECK:       %[[UNITS:.*]] = nn.constant dense<[1.250000e-01, 6.250000e-02]> : tensor<2xf32>
// CHECK-NEXT:  %[[BIAS:.*]] = nn.div %b, %[[UNITS]] : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:  %cq = nn.qconv2d %x, %wq, %[[BIAS]] {{.*}} : (tensor<1x2x4x4xui8>, tensor<2x2x1x1xi8>, tensor<2xf32>) -> tensor<1x2x4x4xui8>
// PIPE-LABEL: func.func @float_bias
// PIPE:       nn.div %b, %{{.*}} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>{{$}}
// PIPE:       nn.qconv2d {{.*}}#nn.kernel<"qconv2d_ref"

// -----

// A residual block as torch's x86 quantizer writes it: the convolution's float result plus the
// dequantized identity, a Relu, one quantize: an nn.qconv2d_add without c (one rounding, the
// Relu the result's clamp at y's zero point). With an identity of another integer type the
// add stays float, with a remark (the convolution, its result float, is nn.qconv2d_to_float).
func.func @x86_residual(%x: tensor<1x2x4x4xui8>, %r: tensor<1x2x4x4xui8>, %s: tensor<1x2x4x4xi8>) -> (tensor<1x2x4x4xui8>, tensor<1x2x4x4xui8>) {
  %wq = nn.constant dense<1> : tensor<2x2x1x1xi8>
  %xf = nn.dequantize %x {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<1x2x4x4xui8> -> tensor<1x2x4x4xf32>
  %wf = nn.dequantize %wq {axis = 0 : i64, x_scale = dense<[0.25, 0.125]> : tensor<2xf32>, x_zero_point = dense<0> : tensor<2xi8>} : tensor<2x2x1x1xi8> -> tensor<2x2x1x1xf32>
  %rf = nn.dequantize %r {x_scale = dense<0.75> : tensor<f32>, x_zero_point = dense<3> : tensor<ui8>} : tensor<1x2x4x4xui8> -> tensor<1x2x4x4xf32>
  %c = nn.conv2d %xf, %wf strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %sum = nn.add %rf, %c : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %act = nn.relu %sum : tensor<1x2x4x4xf32>
  %y = nn.quantize %act {y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xui8>
  %sf = nn.dequantize %s {x_scale = dense<0.75> : tensor<f32>, x_zero_point = dense<3> : tensor<i8>} : tensor<1x2x4x4xi8> -> tensor<1x2x4x4xf32>
  %c2 = nn.conv2d %xf, %wf strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %sum2 = nn.add %c2, %sf : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not folded into a quantized op: the addend and the result have different integer types}}
  %z = nn.quantize %sum2 {y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xui8>
  func.return %y, %z : tensor<1x2x4x4xui8>, tensor<1x2x4x4xui8>
}
// CHECK-LABEL: func.func @x86_residual
// CHECK:       %y = nn.qconv2d_add %x, %wq add %r strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {clamp_min = 10 : i64, x_scale = dense<5.000000e-01> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>, w_scale = dense<[2.500000e-01, 1.250000e-01]> : tensor<2xf32>, w_zero_point = dense<0> : tensor<2xi8>, r_scale = dense<7.500000e-01> : tensor<f32>, r_zero_point = dense<3> : tensor<ui8>, y_scale = dense<2.000000e+00> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : (tensor<1x2x4x4xui8>, tensor<2x2x1x1xi8>, tensor<1x2x4x4xui8>) -> tensor<1x2x4x4xui8>
// CHECK:       %c2 = nn.qconv2d_to_float %x, %wq
// CHECK:       %z = nn.quantize %sum2
// PIPE-LABEL: func.func @x86_residual
// PIPE:       nn.qconv2d_add {{.*}}#nn.kernel<"qconv2d_add_ref"
// PIPE-NOT:   c_scale

// -----

// A convolution's result that the add broadcasts (here [1, 2, 1, 1] against [1, 2, 4, 4]) is
// no residual block: the add stays float, with a remark (it once became an nn.qconv2d_add of
// the convolution's shape, which failed verification; found by a helper's review); the
// convolution, its result float, is nn.qconv2d_to_float.
func.func @x86_broadcast(%x: tensor<1x2x3x3xui8>, %r: tensor<1x2x4x4xui8>) -> tensor<1x2x4x4xui8> {
  %wq = nn.constant dense<1> : tensor<2x2x3x3xi8>
  %xf = nn.dequantize %x {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<1x2x3x3xui8> -> tensor<1x2x3x3xf32>
  %wf = nn.dequantize %wq {axis = 0 : i64, x_scale = dense<[0.25, 0.125]> : tensor<2xf32>, x_zero_point = dense<0> : tensor<2xi8>} : tensor<2x2x3x3xi8> -> tensor<2x2x3x3xf32>
  %rf = nn.dequantize %r {x_scale = dense<0.75> : tensor<f32>, x_zero_point = dense<3> : tensor<ui8>} : tensor<1x2x4x4xui8> -> tensor<1x2x4x4xf32>
  %c = nn.conv2d %xf, %wf strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x2x3x3xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x1x1xf32>
  %sum = nn.add %c, %rf : (tensor<1x2x1x1xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not folded into a quantized op: lhs is not the result of an nn.dequantize}}
  %y = nn.quantize %sum {y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xui8>
  func.return %y : tensor<1x2x4x4xui8>
}
// CHECK-LABEL: func.func @x86_broadcast
// CHECK:       %c = nn.qconv2d_to_float %x, %wq
// CHECK-NEXT:  %sum = nn.add %c, %rf
// CHECK-NEXT:  %y = nn.quantize %sum

// -----

// A Linear layer as the dynamo exporter writes it (pt2e): matmul by a transpose of dequantized
// weights, plus a float bias: one qmatmul, b the transposed integers (computed at load).
func.func @linear(%x: tensor<1x3x2xi8>) -> tensor<1x3x4xi8> {
  %wq = nn.constant dense<[[1, -2], [3, 4], [-5, 6], [7, 8]]> : tensor<4x2xi8>
  %b = nn.constant dense<[0.5, -0.25, 1.0, 0.0]> : tensor<4xf32>
  %xf = nn.dequantize %x {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<3> : tensor<i8>} : tensor<1x3x2xi8> -> tensor<1x3x2xf32>
  %wf = nn.dequantize %wq {axis = 0 : i64, x_scale = dense<[0.25, 0.125, 0.5, 1.0]> : tensor<4xf32>, x_zero_point = dense<0> : tensor<4xi8>} : tensor<4x2xi8> -> tensor<4x2xf32>
  %wt = nn.transpose %wf perm [1, 0] : tensor<4x2xf32> -> tensor<2x4xf32>
  %m = nn.matmul %xf, %wt : (tensor<1x3x2xf32>, tensor<2x4xf32>) -> tensor<1x3x4xf32>
  %s = nn.add %m, %b : (tensor<1x3x4xf32>, tensor<4xf32>) -> tensor<1x3x4xf32>
  %y = nn.quantize %s {y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<-4> : tensor<i8>} : tensor<1x3x4xf32> -> tensor<1x3x4xi8>
  func.return %y : tensor<1x3x4xi8>
}
// CHECK-LABEL: func.func @linear
// CHECK:       %[[UNITS:.*]] = nn.constant dense<[1.250000e-01, 6.250000e-02, 2.500000e-01, 5.000000e-01]> : tensor<4xf32>
// CHECK-NEXT:  %[[BIAS:.*]] = nn.div %b, %[[UNITS]]
// CHECK-NEXT:  %[[B:.*]] = nn.transpose %wq perm [1, 0] : tensor<4x2xi8> -> tensor<2x4xi8>
// CHECK-NEXT:  %y = nn.qmatmul %x, %[[B]], %[[BIAS]] {{.*}}b_scale = dense<[2.500000e-01, 1.250000e-01, 5.000000e-01, 1.000000e+00]> : tensor<4xf32>{{.*}} : (tensor<1x3x2xi8>, tensor<2x4xi8>, tensor<4xf32>) -> tensor<1x3x4xi8>
// CHECK-NEXT:  func.return %y
// PIPE-LABEL: func.func @linear
// PIPE-NOT:   nn.matmul
// PIPE:       nn.qmatmul

// -----

// A transformer's MLP as torch's x86 quantizer leaves it: Linear (matmul + bias) -> GELU ->
// quantize, the GELU's result quantized, not the Linear's: one nn.qmatmul with the bias and
// the GELU as its activation; likewise a Gemm -> HardSwish -> quantize.
func.func @linear_gelu(%x: tensor<1x3x2xui8>, %g: tensor<3x2xui8>) -> (tensor<1x3x4xui8>, tensor<3x4xui8>) {
  %wq = nn.constant dense<[[1, -2], [3, 4], [-5, 6], [7, 8]]> : tensor<4x2xi8>
  %b = nn.constant dense<[0.5, -0.25, 1.0, 0.0]> : tensor<4xf32>
  %xf = nn.dequantize %x {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<131> : tensor<ui8>} : tensor<1x3x2xui8> -> tensor<1x3x2xf32>
  %wf = nn.dequantize %wq {axis = 0 : i64, x_scale = dense<[0.25, 0.125, 0.5, 1.0]> : tensor<4xf32>, x_zero_point = dense<0> : tensor<4xi8>} : tensor<4x2xi8> -> tensor<4x2xf32>
  %wt = nn.transpose %wf perm [1, 0] : tensor<4x2xf32> -> tensor<2x4xf32>
  %m = nn.matmul %xf, %wt : (tensor<1x3x2xf32>, tensor<2x4xf32>) -> tensor<1x3x4xf32>
  %s = nn.add %m, %b : (tensor<1x3x4xf32>, tensor<4xf32>) -> tensor<1x3x4xf32>
  %a = nn.gelu %s : tensor<1x3x4xf32>
  %y = nn.quantize %a {y_scale = dense<0.25> : tensor<f32>, y_zero_point = dense<7> : tensor<ui8>} : tensor<1x3x4xf32> -> tensor<1x3x4xui8>
  %gf = nn.dequantize %g {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<131> : tensor<ui8>} : tensor<3x2xui8> -> tensor<3x2xf32>
  %h = nn.gemm %gf, %wf, %b trans_b alpha 1.0 beta 1.0 : (tensor<3x2xf32>, tensor<4x2xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %hs = nn.hardswish %h : tensor<3x4xf32>
  %z = nn.quantize %hs {y_scale = dense<0.25> : tensor<f32>, y_zero_point = dense<7> : tensor<ui8>} : tensor<3x4xf32> -> tensor<3x4xui8>
  func.return %y, %z : tensor<1x3x4xui8>, tensor<3x4xui8>
}
// CHECK-LABEL: func.func @linear_gelu
// CHECK:       %y = nn.qmatmul %x, %{{.*}}, %{{.*}} activation "gelu" {a_scale = dense<5.000000e-01> : tensor<f32>, a_zero_point = dense<131> : tensor<ui8>, {{.*}}y_scale = dense<2.500000e-01> : tensor<f32>, y_zero_point = dense<7> : tensor<ui8>} : (tensor<1x3x2xui8>, tensor<2x4xi8>, tensor<4xf32>) -> tensor<1x3x4xui8>
// CHECK:       %z = nn.qmatmul %g, %{{.*}}, %{{.*}} activation "hardswish" {{{.*}}} : (tensor<3x2xui8>, tensor<2x4xi8>, tensor<4xf32>) -> tensor<3x4xui8>
// CHECK-NEXT:  func.return %y, %z
// PIPE-LABEL: func.func @linear_gelu
// PIPE-NOT:   nn.gelu
// PIPE:       nn.qmatmul {{.*}} activation "gelu" {{.*}}#nn.kernel<"qmatmul_ref"

// -----

// A Linear whose inputs are quantized and whose result stays float (torch's x86 quantizer:
// a GELU follows): nn.matmul_integer_to_float of the integers, scaled by a_scale * w_scale per
// column, its bias add left float. A product of two activations stays float, with a remark.
func.func @float_linear(%x: tensor<1x3x2xui8>, %k: tensor<2x3xui8>) -> (tensor<1x3x4xf32>, tensor<1x3x3xf32>) {
  %wq = nn.constant dense<[[1, -2], [3, 4], [-5, 6], [7, 8]]> : tensor<4x2xi8>
  %b = nn.constant dense<[0.5, -0.25, 1.0, 0.0]> : tensor<4xf32>
  %xf = nn.dequantize %x {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<131> : tensor<ui8>} : tensor<1x3x2xui8> -> tensor<1x3x2xf32>
  %wf = nn.dequantize %wq {axis = 0 : i64, x_scale = dense<[0.25, 0.125, 0.5, 1.0]> : tensor<4xf32>, x_zero_point = dense<0> : tensor<4xi8>} : tensor<4x2xi8> -> tensor<4x2xf32>
  %wt = nn.transpose %wf perm [1, 0] : tensor<4x2xf32> -> tensor<2x4xf32>
  %m = nn.matmul %xf, %wt : (tensor<1x3x2xf32>, tensor<2x4xf32>) -> tensor<1x3x4xf32>
  %s = nn.add %m, %b : (tensor<1x3x4xf32>, tensor<4xf32>) -> tensor<1x3x4xf32>
  %g = nn.gelu %s : tensor<1x3x4xf32>
  %kf = nn.dequantize %k {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<131> : tensor<ui8>} : tensor<2x3xui8> -> tensor<2x3xf32>
  // expected-remark @+1 {{not an integer product with a float result: b is not a constant}}
  %p = nn.matmul %xf, %kf : (tensor<1x3x2xf32>, tensor<2x3xf32>) -> tensor<1x3x3xf32>
  func.return %g, %p : tensor<1x3x4xf32>, tensor<1x3x3xf32>
}
// CHECK-LABEL: func.func @float_linear
// CHECK:       %[[S:.*]] = nn.constant dense<[1.250000e-01, 6.250000e-02, 2.500000e-01, 5.000000e-01]> : tensor<4xf32>
// CHECK-NEXT:  %[[Z:.*]] = nn.constant dense<131> : tensor<ui8>
// CHECK-NEXT:  %[[B:.*]] = nn.transpose %wq perm [1, 0] : tensor<4x2xi8> -> tensor<2x4xi8>
// CHECK-NEXT:  %m = nn.matmul_integer_to_float %x, %[[B]] scale %[[S]] zero_point %[[Z]] : (tensor<1x3x2xui8>, tensor<2x4xi8>, tensor<4xf32>, tensor<ui8>) -> tensor<1x3x4xf32>
// CHECK-NEXT:  %s = nn.add %m, %b
// CHECK:       %p = nn.matmul %xf, %kf
// PIPE-LABEL: func.func @float_linear
// PIPE:       nn.matmul_integer_to_float

// -----

// A convolution whose inputs are quantized and whose result stays float (torch's x86
// quantizer: a SiLU follows, its result float too): nn.qconv2d_to_float with the SiLU as its
// activation, its f32 bias divided by x_scale * w_scale at load as nn.qconv2d's is. Weights
// computed at run time stay float, with a remark.
func.func @float_conv(%x: tensor<1x2x4x4xui8>, %v: tensor<2x2x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %wq = nn.constant dense<1> : tensor<2x2x1x1xi8>
  %b = nn.constant dense<[0.3, -0.7]> : tensor<2xf32>
  %xf = nn.dequantize %x {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<1x2x4x4xui8> -> tensor<1x2x4x4xf32>
  %wf = nn.dequantize %wq {axis = 0 : i64, x_scale = dense<[0.25, 0.125]> : tensor<2xf32>, x_zero_point = dense<0> : tensor<2xi8>} : tensor<2x2x1x1xi8> -> tensor<2x2x1x1xf32>
  %c = nn.conv2d %xf, %wf, %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %s = nn.swish %c : tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not an integer product with a float result: the weight is not a constant}}
  %c2 = nn.conv2d %xf, %v strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  func.return %s, %c2 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
// CHECK-LABEL: func.func @float_conv
// CHECK:       %[[BIAS:.*]] = nn.div %b, %{{.*}} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:  %s = nn.qconv2d_to_float %x, %wq, %[[BIAS]] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 activation "swish" {x_scale = dense<5.000000e-01> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>, w_scale = dense<[2.500000e-01, 1.250000e-01]> : tensor<2xf32>, w_zero_point = dense<0> : tensor<2xi8>} : (tensor<1x2x4x4xui8>, tensor<2x2x1x1xi8>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NOT:   nn.swish
// CHECK:       %c2 = nn.conv2d %xf, %v
// PIPE-LABEL: func.func @float_conv
// PIPE:       nn.qconv2d_to_float {{.*}}#nn.kernel<"qconv2d_to_float_ref"

// -----

// An activation between a convolution and its quantize (torch's x86 quantizer: the SiLU's
// result is quantized, not the convolution's) is the nn.qconv2d's activation, applied to
// the real result (hardsigmoid with its attributes). Where the activation's result is read
// elsewhere too (EfficientNet's SE gate multiplies it in float), the convolution's result
// stays float: nn.qconv2d_to_float with the activation, quantized after it.
func.func @activated_conv(%x: tensor<1x2x4x4xui8>) -> (tensor<1x2x4x4xui8>, tensor<1x2x4x4xui8>, tensor<1x2x4x4xf32>) {
  %wq = nn.constant dense<1> : tensor<2x2x1x1xi8>
  %b = nn.constant dense<[0.3, -0.7]> : tensor<2xf32>
  %xf = nn.dequantize %x {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<1x2x4x4xui8> -> tensor<1x2x4x4xf32>
  %wf = nn.dequantize %wq {x_scale = dense<0.25> : tensor<f32>, x_zero_point = dense<0> : tensor<i8>} : tensor<2x2x1x1xi8> -> tensor<2x2x1x1xf32>
  %c = nn.conv2d %xf, %wf, %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %h = nn.hardsigmoid %c alpha 0.2 beta 0.5 : tensor<1x2x4x4xf32>
  %hq = nn.quantize %h {y_scale = dense<0.004> : tensor<f32>, y_zero_point = dense<3> : tensor<ui8>} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xui8>
  %c2 = nn.conv2d %xf, %wf, %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %s = nn.swish %c2 : tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not folded into a quantized op: the float result has other uses}}
  %sq = nn.quantize %s {y_scale = dense<0.01> : tensor<f32>, y_zero_point = dense<5> : tensor<ui8>} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xui8>
  func.return %hq, %sq, %s : tensor<1x2x4x4xui8>, tensor<1x2x4x4xui8>, tensor<1x2x4x4xf32>
}
// CHECK-LABEL: func.func @activated_conv
// CHECK:       %hq = nn.qconv2d %x, %wq, %{{.*}} strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 activation "hardsigmoid" alpha 2.000000e-01 beta 5.000000e-01 {x_scale = dense<5.000000e-01> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>, w_scale = dense<2.500000e-01> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, y_scale = dense<4.000000e-03> : tensor<f32>, y_zero_point = dense<3> : tensor<ui8>} : (tensor<1x2x4x4xui8>, tensor<2x2x1x1xi8>, tensor<2xf32>) -> tensor<1x2x4x4xui8>
// CHECK:       %s = nn.qconv2d_to_float %x, %wq, %{{.*}} activation "swish"
// CHECK-NEXT:  %sq = nn.quantize %s
// PIPE-LABEL: func.func @activated_conv
// PIPE:       nn.qconv2d {{.*}} activation "hardsigmoid" {{.*}}#nn.kernel<"qconv2d_ref"

// -----

// A Linear whose bias is itself computed from constants (a constant nn.matmul): the bias's
// matmul stays, read by the nn.div; only the product's matmul goes (it was erased too, and
// the pass failed on the use the nn.div kept; found by a helper's review). A matmul plus a
// bias computed at run time is no q-op, with a remark naming the Linear form (its product,
// whose result stays float, is nn.matmul_integer_to_float).
func.func @linear_biases(%x: tensor<4x2xf32>, %r: tensor<3xf32>) -> (tensor<4x3xi8>, tensor<4x3xi8>) {
  %aq = nn.quantize %x {y_scale = dense<0.03> : tensor<f32>, y_zero_point = dense<-3> : tensor<i8>} : tensor<4x2xf32> -> tensor<4x2xi8>
  %a = nn.dequantize %aq {x_scale = dense<0.03> : tensor<f32>, x_zero_point = dense<-3> : tensor<i8>} : tensor<4x2xi8> -> tensor<4x2xf32>
  %wq = nn.constant dense<[[81, -50], [-6, 1], [51, 31]]> : tensor<3x2xi8>
  %w = nn.dequantize %wq {x_scale = dense<0.02> : tensor<f32>, x_zero_point = dense<0> : tensor<i8>} : tensor<3x2xi8> -> tensor<3x2xf32>
  %wt = nn.transpose %w perm [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
  %m = nn.matmul %a, %wt : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %k1 = nn.constant dense<[0.5, -0.25]> : tensor<2xf32>
  %k2 = nn.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %bb = nn.matmul %k1, %k2 : (tensor<2xf32>, tensor<2x3xf32>) -> tensor<3xf32>
  %s = nn.add %m, %bb : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %yq = nn.quantize %s {y_scale = dense<0.05> : tensor<f32>, y_zero_point = dense<-2> : tensor<i8>} : tensor<4x3xf32> -> tensor<4x3xi8>
  %m2 = nn.matmul %a, %wt : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %s2 = nn.add %m2, %r : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // expected-remark @+1 {{not folded into a quantized op: a matmul's result plus something other than an f32 constant of one value per column (a Linear's bias), or a matmul result read elsewhere too}}
  %zq = nn.quantize %s2 {y_scale = dense<0.05> : tensor<f32>, y_zero_point = dense<-2> : tensor<i8>} : tensor<4x3xf32> -> tensor<4x3xi8>
  func.return %yq, %zq : tensor<4x3xi8>, tensor<4x3xi8>
}
// CHECK-LABEL: func.func @linear_biases
// CHECK:       %bb = nn.matmul %k1, %k2
// CHECK:       nn.div %bb,
// CHECK:       %yq = nn.qmatmul %aq,
// CHECK:       %m2 = nn.matmul_integer_to_float %aq,
// CHECK:       %zq = nn.quantize %s2
// PIPE-LABEL: func.func @linear_biases
// PIPE:       nn.qmatmul

// -----

// What stays float: a float bias computed at run time; a max pool that requantizes into
// another type; a per-axis quantize.
func.func @unfolded(%x: tensor<1x2x4x4xui8>, %b: tensor<2xf32>) -> (tensor<1x2x4x4xui8>, tensor<1x2x2x2xi8>, tensor<1x2x4x4xui8>) {
  %wq = nn.constant dense<1> : tensor<2x2x1x1xi8>
  %xf = nn.dequantize %x {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<1x2x4x4xui8> -> tensor<1x2x4x4xf32>
  %wf = nn.dequantize %wq {x_scale = dense<0.25> : tensor<f32>, x_zero_point = dense<0> : tensor<i8>} : tensor<2x2x1x1xi8> -> tensor<2x2x1x1xf32>
  // expected-remark @+1 {{not an integer product with a float result: the bias is neither dequantized nor an f32 constant}}
  %c = nn.conv2d %xf, %wf, %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not folded into a quantized op: the bias is neither dequantized nor an f32 constant}}
  %cq = nn.quantize %c {y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xui8>
  %m = nn.max_pool2d %xf kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  // expected-remark @+1 {{not folded into a quantized op: the dequantize and the quantize have different parameters}}
  %mq = nn.quantize %m {y_scale = dense<1.0> : tensor<f32>, y_zero_point = dense<0> : tensor<i8>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xi8>
  %r = nn.relu %xf : tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not folded into a quantized op: the quantize is per axis}}
  %rq = nn.quantize %r {axis = 1 : i64, y_scale = dense<[1.0, 2.0]> : tensor<2xf32>, y_zero_point = dense<[0, 1]> : tensor<2xui8>} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xui8>
  func.return %cq, %mq, %rq : tensor<1x2x4x4xui8>, tensor<1x2x2x2xi8>, tensor<1x2x4x4xui8>
}
// CHECK-LABEL: func.func @unfolded
// CHECK: nn.conv2d
// CHECK: nn.quantize
// CHECK: nn.max_pool2d %xf
// CHECK: nn.quantize
// CHECK: nn.relu
// CHECK: nn.quantize

// -----

// A linear resize between a dequantize and a quantize (onnxruntime's QDQ Resize, a
// segmentation head's upsampling) is nn.qresize: the float ops' interpolation, quantized once,
// with other parameters too. A quantize to another integer type stays float, with a remark.
func.func @linear_resize(%x: tensor<1x1x2x2xui8>) -> (tensor<1x1x4x4xui8>, tensor<1x1x4x4xi8>) {
  %xf = nn.dequantize %x {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<0> : tensor<ui8>} : tensor<1x1x2x2xui8> -> tensor<1x1x2x2xf32>
  %r = nn.resize %xf mode "linear" coordinates "half_pixel" nearest "round_prefer_floor" scales [2.0, 2.0] : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
  %y = nn.quantize %r {y_scale = dense<0.25> : tensor<f32>, y_zero_point = dense<7> : tensor<ui8>} : tensor<1x1x4x4xf32> -> tensor<1x1x4x4xui8>
  %r2 = nn.resize %xf mode "linear" coordinates "half_pixel" nearest "round_prefer_floor" scales [2.0, 2.0] : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
  // expected-remark @+1 {{not folded into a quantized op: the dequantize and the quantize have different integer types}}
  %z = nn.quantize %r2 {y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<0> : tensor<i8>} : tensor<1x1x4x4xf32> -> tensor<1x1x4x4xi8>
  func.return %y, %z : tensor<1x1x4x4xui8>, tensor<1x1x4x4xi8>
}
// CHECK-LABEL: func.func @linear_resize
// CHECK:      %y = nn.qresize %x mode "linear" coordinates "half_pixel" nearest "round_prefer_floor" scales [2.000000e+00, 2.000000e+00] {x_scale = dense<5.000000e-01> : tensor<f32>, x_zero_point = dense<0> : tensor<ui8>, y_scale = dense<2.500000e-01> : tensor<f32>, y_zero_point = dense<7> : tensor<ui8>} : tensor<1x1x2x2xui8> -> tensor<1x1x4x4xui8>
// CHECK:      nn.resize %xf mode "linear"
// CHECK-NEXT: %z = nn.quantize
// PIPE-LABEL: func.func @linear_resize
// PIPE:       nn.qresize {{.*}}#nn.kernel<"qresize_ref"

// -----

// A slice between a dequantize and a quantize of other parameters of the same type (torch's
// channel split requantizes each half): the slice of the integers, then the requantization's
// table, q(dq(v)) = round_half_even((v - 128) * 0.5) + 128: 64, 64, 65, 66, 66, 66, 67, ...
// (the pipeline makes the slice a view, which the table reads).
func.func @requantized(%x: tensor<1x4x2x2xui8>) -> tensor<1x2x2x2xui8> {
  %xf = nn.dequantize %x {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<1x4x2x2xui8> -> tensor<1x4x2x2xf32>
  %s = nn.slice %xf starts [0, 2, 0, 0] sizes [1, 2, 2, 2] steps [1, 1, 1, 1] : tensor<1x4x2x2xf32> -> tensor<1x2x2x2xf32>
  %y = nn.quantize %s {y_scale = dense<1.0> : tensor<f32>, y_zero_point = dense<128> : tensor<ui8>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xui8>
  func.return %y : tensor<1x2x2x2xui8>
}
// CHECK-LABEL: func.func @requantized
// CHECK-NEXT: %{{.*}} = nn.slice %x starts [0, 2, 0, 0] {{.*}} : tensor<1x4x2x2xui8> -> tensor<1x2x2x2xui8>
// CHECK-NEXT: %y = nn.qlookup %{{.*}} {x_scale = dense<5.000000e-01> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>, y_scale = dense<1.000000e+00> : tensor<f32>, y_zero_point = dense<128> : tensor<ui8>, table = dense<"0x40404142424243
// CHECK-NEXT: func.return %y
// PIPE-LABEL: func.func @requantized
// PIPE:       memref.subview %x[0, 2, 0, 0] [1, 2, 2, 2]
// PIPE:       nn.qlookup

// -----

// add -> relu -> quantize (torch's quantized residual add): a qadd clamped at y's zero point,
// not clamped where that zero point is the type's least value (saturation is the relu).
func.func @add_relu(%a: tensor<1x2x2x2xui8>, %b: tensor<1x2x2x2xui8>) -> (tensor<1x2x2x2xui8>, tensor<1x2x2x2xui8>) {
  %af = nn.dequantize %a {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<1x2x2x2xui8> -> tensor<1x2x2x2xf32>
  %bf = nn.dequantize %b {x_scale = dense<0.25> : tensor<f32>, x_zero_point = dense<100> : tensor<ui8>} : tensor<1x2x2x2xui8> -> tensor<1x2x2x2xf32>
  %s = nn.add %af, %bf : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %r = nn.relu %s : tensor<1x2x2x2xf32>
  %y = nn.quantize %r {y_scale = dense<1.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xui8>
  %s2 = nn.add %af, %bf : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %r2 = nn.relu %s2 : tensor<1x2x2x2xf32>
  %y2 = nn.quantize %r2 {y_scale = dense<1.0> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xui8>
  func.return %y, %y2 : tensor<1x2x2x2xui8>, tensor<1x2x2x2xui8>
}
// CHECK-LABEL: func.func @add_relu
// CHECK:      %y = nn.qadd %a, %b {{{.*}}, y_zero_point = dense<10> : tensor<ui8>, clamp_min = 10 : i64}
// CHECK:      %y2 = nn.qadd %a, %b {{{.*}}, y_zero_point = dense<0> : tensor<ui8>} :
// CHECK-NOT:  nn.relu
// PIPE-LABEL: func.func @add_relu
// PIPE-NOT:   nn.relu

// -----

// quantize -> dequantize -> clip -> quantize of the same parameters (torch's ReLU6): the clip
// narrows the clamp of the quantized op before it: [10, 20] = [quantize(0), quantize(20)].
func.func @conv_relu6(%x: tensor<1x1x2x2xui8>) -> tensor<1x1x2x2xui8> {
  %wq = nn.constant dense<[[[[3]]]]> : tensor<1x1x1x1xi8>
  %xf = nn.dequantize %x {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<1x1x2x2xui8> -> tensor<1x1x2x2xf32>
  %wf = nn.dequantize %wq {x_scale = dense<0.25> : tensor<f32>, x_zero_point = dense<0> : tensor<i8>} : tensor<1x1x1x1xi8> -> tensor<1x1x1x1xf32>
  %c = nn.conv2d %xf, %wf strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32>
  %cq = nn.quantize %c {y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : tensor<1x1x2x2xf32> -> tensor<1x1x2x2xui8>
  %cf = nn.dequantize %cq {x_scale = dense<2.0> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>} : tensor<1x1x2x2xui8> -> tensor<1x1x2x2xf32>
  %k = nn.clip %cf min 0.0 max 20.0 : tensor<1x1x2x2xf32>
  %y = nn.quantize %k {y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : tensor<1x1x2x2xf32> -> tensor<1x1x2x2xui8>
  func.return %y : tensor<1x1x2x2xui8>
}
// CHECK-LABEL: func.func @conv_relu6
// CHECK:      %cq = nn.qconv2d %x, %wq {{.*}}y_zero_point = dense<10> : tensor<ui8>, clamp_min = 10 : i64, clamp_max = 20 : i64}
// CHECK-NEXT: func.return %cq

// -----

// Not narrowed: the dequantize reads the convolution's result with other parameters than
// it was written with (the clip's bounds would be in the wrong units); a table instead.
func.func @relu6_other_params(%x: tensor<1x1x2x2xui8>) -> tensor<1x1x2x2xui8> {
  %wq = nn.constant dense<[[[[3]]]]> : tensor<1x1x1x1xi8>
  %xf = nn.dequantize %x {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<1x1x2x2xui8> -> tensor<1x1x2x2xf32>
  %wf = nn.dequantize %wq {x_scale = dense<0.25> : tensor<f32>, x_zero_point = dense<0> : tensor<i8>} : tensor<1x1x1x1xi8> -> tensor<1x1x1x1xf32>
  %c = nn.conv2d %xf, %wf strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32>
  %cq = nn.quantize %c {y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : tensor<1x1x2x2xf32> -> tensor<1x1x2x2xui8>
  %cf = nn.dequantize %cq {x_scale = dense<1.0> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>} : tensor<1x1x2x2xui8> -> tensor<1x1x2x2xf32>
  %k = nn.clip %cf min 0.0 max 20.0 : tensor<1x1x2x2xf32>
  %y = nn.quantize %k {y_scale = dense<1.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : tensor<1x1x2x2xf32> -> tensor<1x1x2x2xui8>
  func.return %y : tensor<1x1x2x2xui8>
}
// CHECK-LABEL: func.func @relu6_other_params
// CHECK:      %cq = nn.qconv2d %x, %wq {{.*}}y_zero_point = dense<10> : tensor<ui8>} :
// CHECK-NEXT: %y = nn.qlookup %cq

// -----

// dequantize -> an element-wise function -> quantize: a table of the 256 values (torch's
// quantized hardswish, sigmoid, ...). hardsigmoid (alpha 0.5, beta 0.5) with x of scale 1
// and zero point 128 and y of scale 1/128, zero point 0: x <= 127 (real <= -1) gives 0,
// x = 128 (real 0) gives 64 (0.5), x >= 129 (real >= 1) saturates to 128 (1.0). The function
// is recorded beside the table (a kernel may compute it where it gives the same bytes).
func.func @table(%x: tensor<1x2x2x2xui8>) -> tensor<1x2x2x2xui8> {
  %xf = nn.dequantize %x {x_scale = dense<1.0> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<1x2x2x2xui8> -> tensor<1x2x2x2xf32>
  %h = nn.hardsigmoid %xf alpha 5.000000e-01 beta 5.000000e-01 : tensor<1x2x2x2xf32>
  %y = nn.quantize %h {y_scale = dense<0.0078125> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xui8>
  func.return %y : tensor<1x2x2x2xui8>
}
// CHECK-LABEL: func.func @table
// CHECK-NEXT: %y = nn.qlookup %x {x_scale = dense<1.000000e+00> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>, y_scale = dense<7.812500e-03> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>, table = dense<"0x{{(00)+}}40{{(80)+}}"> : tensor<256xui8>, activation = "hardsigmoid", alpha = 5.000000e-01 : f32, beta = 5.000000e-01 : f32} : tensor<1x2x2x2xui8> -> tensor<1x2x2x2xui8>
// CHECK-NEXT: func.return %y
// PIPE-LABEL: func.func @table
// PIPE:       nn.qlookup {{.*}}#nn.kernel<"qlookup_any"

// -----

// A quantize whose kernel was chosen already (a hand-edited or re-run pipeline) stays: fold-qdq
// folds no table and no clamp into it, and says why.
func.func @table_chosen(%x: tensor<1x2x2x2xui8>) -> tensor<1x2x2x2xui8> {
  %xf = nn.dequantize %x {x_scale = dense<1.0> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<1x2x2x2xui8> -> tensor<1x2x2x2xf32>
  %h = nn.hardsigmoid %xf alpha 5.000000e-01 beta 5.000000e-01 : tensor<1x2x2x2xf32>
  // expected-remark @+1 {{not folded into a quantized op: a kernel was chosen already (fold-qdq runs before select-dispatch)}}
  %y = nn.quantize %h {y_scale = dense<0.0078125> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>, kernel = #nn.kernel<"quantize_ref", operands = ["NCHW"], results = ["NCHW"]>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xui8>
  func.return %y : tensor<1x2x2x2xui8>
}
// CHECK-LABEL: func.func @table_chosen
// CHECK-NEXT: nn.dequantize
// CHECK-NEXT: nn.hardsigmoid
// CHECK-NEXT: nn.quantize
// PIPE-LABEL: func.func @table_chosen
// PIPE:       nn.hardsigmoid

// -----

// Nor does an activation whose kernel was chosen already fold into the product before it
// (its kernel would be lost; found by a helper's review).
func.func @activation_chosen(%x: tensor<3x2xui8>) -> tensor<3x4xui8> {
  %wq = nn.constant dense<[[1, -2, 3, 4], [-5, 6, 7, 8]]> : tensor<2x4xi8>
  %xf = nn.dequantize %x {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<131> : tensor<ui8>} : tensor<3x2xui8> -> tensor<3x2xf32>
  %wf = nn.dequantize %wq {x_scale = dense<0.25> : tensor<f32>, x_zero_point = dense<0> : tensor<i8>} : tensor<2x4xi8> -> tensor<2x4xf32>
  %m = nn.matmul %xf, %wf : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %a = nn.gelu %m {kernel = #nn.kernel<"gelu_ref", operands = [""], results = [""]>} : tensor<3x4xf32>
  // expected-remark @+1 {{not folded into a quantized op: a kernel was chosen already (fold-qdq runs before select-dispatch)}}
  %y = nn.quantize %a {y_scale = dense<0.25> : tensor<f32>, y_zero_point = dense<7> : tensor<ui8>} : tensor<3x4xf32> -> tensor<3x4xui8>
  func.return %y : tensor<3x4xui8>
}
// CHECK-LABEL: func.func @activation_chosen
// CHECK:      %m = nn.matmul_integer_to_float
// CHECK-NEXT: %a = nn.gelu %m {kernel = #nn.kernel<"gelu_ref"
// CHECK-NEXT: %y = nn.quantize %a

// -----

// Average pooling: the window, pads and count_include_pad carried over, the padding x's zero
// point (a real 0); folded only where the integer average rounds as the f32 ops do: equal
// scales (the zero points may differ) and one odd divisor (quantized-dispatch.mlir: which
// kernels run it).
func.func @avg_pool(%x: tensor<1x2x4x4xui8>) -> (tensor<1x2x4x4xui8>, tensor<1x2x4x4xui8>, tensor<1x2x2x2xui8>, tensor<1x2x4x4xui8>) {
  %xf = nn.dequantize %x {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<100> : tensor<ui8>} : tensor<1x2x4x4xui8> -> tensor<1x2x4x4xf32>
  %a = nn.avg_pool2d %xf kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] count_include_pad : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %aq = nn.quantize %a {y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<90> : tensor<ui8>} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xui8>
  %b = nn.avg_pool2d %xf kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not folded into a quantized op: its windows divide by different counts (pads that do not count: a border window divides by its input positions only)}}
  %bq = nn.quantize %b {y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<100> : tensor<ui8>} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xui8>
  %c = nn.avg_pool2d %xf kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  // expected-remark @+1 {{not folded into a quantized op: its windows divide by 4: an average can land on a half step, where the f32 ops round either way}}
  %cq = nn.quantize %c {y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<100> : tensor<ui8>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xui8>
  %d = nn.avg_pool2d %xf kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] count_include_pad : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not folded into a quantized op: x and y have different scales: the integer average rounds a value near a half step as the f32 ops may not}}
  %dq = nn.quantize %d {y_scale = dense<0.25> : tensor<f32>, y_zero_point = dense<100> : tensor<ui8>} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xui8>
  func.return %aq, %bq, %cq, %dq : tensor<1x2x4x4xui8>, tensor<1x2x4x4xui8>, tensor<1x2x2x2xui8>, tensor<1x2x4x4xui8>
}
// CHECK-LABEL: func.func @avg_pool
// CHECK:      %aq = nn.qavg_pool2d %x kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] count_include_pad {x_scale = dense<5.000000e-01> : tensor<f32>, x_zero_point = dense<100> : tensor<ui8>, y_scale = dense<5.000000e-01> : tensor<f32>, y_zero_point = dense<90> : tensor<ui8>} : tensor<1x2x4x4xui8> -> tensor<1x2x4x4xui8>
// CHECK:      nn.avg_pool2d %xf kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] :
// CHECK-NEXT: %bq = nn.quantize
// CHECK:      nn.avg_pool2d %xf kernel [2, 2]
// CHECK-NEXT: %cq = nn.quantize
// CHECK:      nn.avg_pool2d %xf kernel [3, 3] {{.*}} count_include_pad
// CHECK-NEXT: %dq = nn.quantize
// PIPE-LABEL: func.func @avg_pool
// PIPE:       nn.qavg_pool2d {{.*}}count_include_pad {kernel = #nn.kernel<"qavg_pool2d_ref"

// -----

// A chain of element-wise functions with one-element constants (x / c -> erf) becomes one
// table; a table of that table's result (+ 1, a quantized constant) composes with it; a
// chain op read twice stops the chain (the quantize after it stays).
func.func @table_chain(%x: tensor<1x2x2x2xui8>) -> (tensor<1x2x2x2xui8>, tensor<1x2x2x2xui8>) {
  %xf = nn.dequantize %x {x_scale = dense<0.03> : tensor<f32>, x_zero_point = dense<120> : tensor<ui8>} : tensor<1x2x2x2xui8> -> tensor<1x2x2x2xf32>
  %c = nn.constant dense<1.41421354> : tensor<f32>
  %d = nn.div %xf, %c : (tensor<1x2x2x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %e = nn.erf %d : tensor<1x2x2x2xf32>
  %eq = nn.quantize %e {y_scale = dense<0.0078> : tensor<f32>, y_zero_point = dense<128> : tensor<ui8>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xui8>
  %ef = nn.dequantize %eq {x_scale = dense<0.0078> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<1x2x2x2xui8> -> tensor<1x2x2x2xf32>
  %oq = nn.constant dense<255> : tensor<ui8>
  %of = nn.dequantize %oq {x_scale = dense<0.0039> : tensor<f32>, x_zero_point = dense<0> : tensor<ui8>} : tensor<ui8> -> tensor<f32>
  %a = nn.add %ef, %of : (tensor<1x2x2x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %aq = nn.quantize %a {y_scale = dense<0.0078> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xui8>
  %h = nn.constant dense<0.5> : tensor<f32>
  %m = nn.mul %xf, %h : (tensor<1x2x2x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %t = nn.tanh %m : tensor<1x2x2x2xf32>
  %s = nn.add %t, %m : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  // expected-remark @+1 {{not folded into a quantized op: lhs is not the result of an nn.dequantize}}
  %sq = nn.quantize %s {y_scale = dense<0.01> : tensor<f32>, y_zero_point = dense<-3> : tensor<i8>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xi8>
  %sr = nn.dequantize %sq {x_scale = dense<0.01> : tensor<f32>, x_zero_point = dense<-3> : tensor<i8>} : tensor<1x2x2x2xi8> -> tensor<1x2x2x2xf32>
  %r = nn.quantize %sr {y_scale = dense<0.01> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xui8>
  func.return %aq, %r : tensor<1x2x2x2xui8>, tensor<1x2x2x2xui8>
}
// CHECK-LABEL: func.func @table_chain
// CHECK:      %aq = nn.qlookup %x {x_scale = dense<3.000000e-02> : tensor<f32>, x_zero_point = dense<120> : tensor<ui8>, y_scale = dense<7.800000e-03> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>, table = dense<"0x{{[0-9A-F]+}}"> : tensor<256xui8>} : tensor<1x2x2x2xui8> -> tensor<1x2x2x2xui8>
// CHECK-NOT:  nn.erf
// CHECK-NOT:  nn.div
// CHECK-NOT:  dense<1.41421354>
// CHECK-NOT:  dense<255> : tensor<ui8>
// CHECK:      nn.tanh
// CHECK:      %sq = nn.quantize %s
