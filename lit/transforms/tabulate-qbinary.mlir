// RUN: nnlayout-opt %s --split-input-file -p 'fold-qdq,tabulate-qbinary' | filecheck %s
// RUN: nnlayout-opt %s --split-input-file -p 'default-pipeline{target=ref}' | filecheck %s --check-prefix=PIPE

// onnxruntime's quantized swish: sigmoid between a dequantize and a quantize (fold-qdq: a
// table of x), then x times that, quantized (fold-qdq: nn.qmul of x and the table's result).
// Both operands are functions of x: the product is one table of x, with the qmul's result
// parameters; the sigmoid's table, read by nothing else, goes.
func.func @swish(%x: tensor<1x4x3x3xui8>) -> tensor<1x4x3x3xui8> {
  %xf = nn.dequantize %x {x_scale = dense<0.05> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<1x4x3x3xui8> -> tensor<1x4x3x3xf32>
  %s = nn.sigmoid %xf : tensor<1x4x3x3xf32>
  %sq = nn.quantize %s {y_scale = dense<0.00390625> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : tensor<1x4x3x3xf32> -> tensor<1x4x3x3xui8>
  %sf = nn.dequantize %sq {x_scale = dense<0.00390625> : tensor<f32>, x_zero_point = dense<0> : tensor<ui8>} : tensor<1x4x3x3xui8> -> tensor<1x4x3x3xf32>
  %m = nn.mul %xf, %sf : (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %y = nn.quantize %m {y_scale = dense<0.04> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : tensor<1x4x3x3xf32> -> tensor<1x4x3x3xui8>
  func.return %y : tensor<1x4x3x3xui8>
}
// CHECK-LABEL: func.func @swish
// CHECK-NEXT:    %y = nn.qlookup %x {x_scale = dense<5.000000e-02> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>, y_scale = dense<4.000000e-02> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>, table = dense<"0x{{[0-9A-F]+}}"> : tensor<256xui8>} : tensor<1x4x3x3xui8> -> tensor<1x4x3x3xui8>
// CHECK-NEXT:    func.return %y
// PIPE-LABEL: func.func @swish
// PIPE:         nn.qlookup {{.*}}#nn.kernel<"qlookup_ref"
// PIPE-NOT:     nn.qmul

// -----

// x * x: both operands x itself. The square's table; with hardsigmoid (alpha 0.5, beta 0.5,
// x of scale 1) times x, a table read elsewhere too: it stays, the product becomes a table.
func.func @square_and_shared(%x: tensor<1x2x2x2xui8>) -> (tensor<1x2x2x2xui8>, tensor<1x2x2x2xui8>, tensor<1x2x2x2xui8>) {
  %xf = nn.dequantize %x {x_scale = dense<1.0> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<1x2x2x2xui8> -> tensor<1x2x2x2xf32>
  %sq = nn.mul %xf, %xf : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %sqq = nn.quantize %sq {y_scale = dense<64.0> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xui8>
  %h = nn.hardsigmoid %xf alpha 5.000000e-01 beta 5.000000e-01 : tensor<1x2x2x2xf32>
  %hq = nn.quantize %h {y_scale = dense<0.0078125> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xui8>
  %hf = nn.dequantize %hq {x_scale = dense<0.0078125> : tensor<f32>, x_zero_point = dense<0> : tensor<ui8>} : tensor<1x2x2x2xui8> -> tensor<1x2x2x2xf32>
  %p = nn.mul %hf, %xf : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %pq = nn.quantize %p {y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<128> : tensor<ui8>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xui8>
  func.return %sqq, %hq, %pq : tensor<1x2x2x2xui8>, tensor<1x2x2x2xui8>, tensor<1x2x2x2xui8>
}
// The square of x - 128 in steps of 64: 0xFF first (16384 / 64 = 256, saturated).
// CHECK-LABEL: func.func @square_and_shared
// CHECK-NEXT:    %sqq = nn.qlookup %x {{.*}}y_scale = dense<6.400000e+01> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>, table = dense<"0x{{FF[0-9A-F]+}}"> : tensor<256xui8>}
// CHECK-NEXT:    %hq = nn.qlookup %x {{.*}}activation = "hardsigmoid"
// CHECK-NEXT:    %pq = nn.qlookup %x {x_scale = dense<1.000000e+00> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>, y_scale = dense<5.000000e-01> : tensor<f32>, y_zero_point = dense<128> : tensor<ui8>, table = dense<"0x{{[0-9A-F]+}}"> : tensor<256xui8>}
// CHECK-NEXT:    func.return %sqq, %hq, %pq

// -----

// Not one table: the operands are functions of two values (x and z). (x * x quantized to i8,
// another type than x's, is not even a qmul.)
func.func @kept(%x: tensor<1x2x2x2xui8>, %z: tensor<1x2x2x2xui8>) -> (tensor<1x2x2x2xui8>, tensor<1x2x2x2xi8>) {
  %xf = nn.dequantize %x {x_scale = dense<0.1> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<1x2x2x2xui8> -> tensor<1x2x2x2xf32>
  %zf = nn.dequantize %z {x_scale = dense<0.1> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<1x2x2x2xui8> -> tensor<1x2x2x2xf32>
  %m = nn.mul %xf, %zf : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %mq = nn.quantize %m {y_scale = dense<0.1> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xui8>
  %s = nn.mul %xf, %xf : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %sq = nn.quantize %s {y_scale = dense<0.1> : tensor<f32>, y_zero_point = dense<0> : tensor<i8>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xi8>
  func.return %mq, %sq : tensor<1x2x2x2xui8>, tensor<1x2x2x2xi8>
}
// CHECK-LABEL: func.func @kept
// CHECK:         %mq = nn.qmul %x, %z
// CHECK:         %sq = nn.quantize %s
// PIPE-LABEL: func.func @kept

// -----

// A table of the product's result (tanh between a dequantize and a quantize), read only
// there: once the product is a table of x, the two compose into one table of x.
func.func @composed(%x: tensor<1x4x3x3xui8>) -> tensor<1x4x3x3xui8> {
  %xf = nn.dequantize %x {x_scale = dense<0.05> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<1x4x3x3xui8> -> tensor<1x4x3x3xf32>
  %m = nn.mul %xf, %xf : (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %mq = nn.quantize %m {y_scale = dense<0.1> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : tensor<1x4x3x3xf32> -> tensor<1x4x3x3xui8>
  %mf = nn.dequantize %mq {x_scale = dense<0.1> : tensor<f32>, x_zero_point = dense<0> : tensor<ui8>} : tensor<1x4x3x3xui8> -> tensor<1x4x3x3xf32>
  %t = nn.tanh %mf : tensor<1x4x3x3xf32>
  %y = nn.quantize %t {y_scale = dense<0.0078125> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : tensor<1x4x3x3xf32> -> tensor<1x4x3x3xui8>
  func.return %y : tensor<1x4x3x3xui8>
}
// CHECK-LABEL: func.func @composed
// CHECK-NEXT:    %y = nn.qlookup %x {x_scale = dense<5.000000e-02> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>, y_scale = dense<7.812500e-03> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>, table = dense<"0x{{[0-9A-F]+}}"> : tensor<256xui8>}
// CHECK-NEXT:    func.return %y
