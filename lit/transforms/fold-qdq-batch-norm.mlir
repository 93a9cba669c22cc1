// fold-qdq: dequantize -> batch norm -> quantize (per tensor) becomes one nn.qbatch_norm, which
// oneDNN's binary primitive runs on `host`; what does not match is left as it is.
// RUN: nnlayout-opt %s --split-input-file -p fold-qdq | filecheck %s
// RUN: nnlayout-opt %s --split-input-file -p 'default-pipeline{target=host}' | filecheck %s --check-prefix=HOST
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics -p 'fold-qdq{remarks=true}'

func.func @folded(%x: tensor<1x4x3x3xui8>) -> tensor<1x4x3x3xui8> {
  %d = nn.dequantize %x {x_scale = dense<0.02> : tensor<f32>, x_zero_point = dense<3> : tensor<ui8>} : tensor<1x4x3x3xui8> -> tensor<1x4x3x3xf32>
  %g = nn.constant dense<[1.0, 0.5, 2.0, 1.5]> : tensor<4xf32>
  %b = nn.constant dense<[0.1, -0.2, 0.3, 0.0]> : tensor<4xf32>
  %m = nn.constant dense<[0.5, 0.1, -0.3, 1.0]> : tensor<4xf32>
  %v = nn.constant dense<[1.0, 2.0, 0.5, 0.25]> : tensor<4xf32>
  %n = nn.batch_norm %d, %g, %b, %m, %v epsilon 1.0e-05 : (tensor<1x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x3x3xf32>
  %y = nn.quantize %n {y_scale = dense<0.05> : tensor<f32>, y_zero_point = dense<128> : tensor<ui8>} : tensor<1x4x3x3xf32> -> tensor<1x4x3x3xui8>
  func.return %y : tensor<1x4x3x3xui8>
}
// CHECK-LABEL: func.func @folded
// CHECK:       %y = nn.qbatch_norm %x, %g, %b, %m, %v epsilon 1.000000e-05 {x_scale = dense<2.000000e-02> : tensor<f32>, x_zero_point = dense<3> : tensor<ui8>, y_scale = dense<5.000000e-02> : tensor<f32>, y_zero_point = dense<128> : tensor<ui8>}
// CHECK-NOT:   nn.dequantize
// CHECK-NOT:   nn.batch_norm
// CHECK:       func.return %y
// HOST-LABEL:  func.func @folded
// HOST:        nn.qbatch_norm {{.*}}#nn.kernel<"qbatch_norm_onednn", operands = ["NHWC", "", "", "", ""], results = ["NHWC"]

// -----

// Left as they are: the batch norm read twice; the dequantize per axis; a kernel chosen.
func.func @unfolded(%x: tensor<1x2x2x2xui8>, %g: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> (tensor<1x2x2x2xui8>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xui8>, tensor<1x2x2x2xui8>) {
  %d = nn.dequantize %x {x_scale = dense<0.02> : tensor<f32>, x_zero_point = dense<3> : tensor<ui8>} : tensor<1x2x2x2xui8> -> tensor<1x2x2x2xf32>
  %n = nn.batch_norm %d, %g, %b, %m, %v epsilon 1.0e-05 : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  // expected-remark @+1 {{[fold-qdq] nn.quantize: not folded into a quantized op: the float result has other uses}}
  %y = nn.quantize %n {y_scale = dense<0.05> : tensor<f32>, y_zero_point = dense<128> : tensor<ui8>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xui8>
  %pa = nn.dequantize %x {axis = 1, x_scale = dense<[0.02, 0.03]> : tensor<2xf32>, x_zero_point = dense<3> : tensor<2xui8>} : tensor<1x2x2x2xui8> -> tensor<1x2x2x2xf32>
  %n2 = nn.batch_norm %pa, %g, %b, %m, %v epsilon 1.0e-05 : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  // expected-remark @+1 {{[fold-qdq] nn.quantize: not folded into a quantized op: nn.batch_norm has no quantized form}}
  %y2 = nn.quantize %n2 {y_scale = dense<0.05> : tensor<f32>, y_zero_point = dense<128> : tensor<ui8>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xui8>
  %d3 = nn.dequantize %x {x_scale = dense<0.02> : tensor<f32>, x_zero_point = dense<3> : tensor<ui8>} : tensor<1x2x2x2xui8> -> tensor<1x2x2x2xf32>
  %n3 = nn.batch_norm %d3, %g, %b, %m, %v epsilon 1.0e-05 {kernel = #nn.kernel<"batch_norm_ref", operands = ["", "", "", "", ""], results = [""]>} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  // expected-remark @+1 {{[fold-qdq] nn.quantize: not folded into a quantized op: a kernel was chosen already (fold-qdq runs before select-dispatch)}}
  %y3 = nn.quantize %n3 {y_scale = dense<0.05> : tensor<f32>, y_zero_point = dense<128> : tensor<ui8>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xui8>
  func.return %y, %n, %y2, %y3 : tensor<1x2x2x2xui8>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xui8>, tensor<1x2x2x2xui8>
}
// CHECK-LABEL: func.func @unfolded
// CHECK-NOT:   nn.qbatch_norm
// CHECK:       func.return

// -----

// A dequantize of i32 (a bias's): not folded (nn.qbatch_norm reads u8 or s8).
func.func @of_i32(%x: tensor<1x2x2x2xi32>, %g: tensor<2xf32>) -> tensor<1x2x2x2xui8> {
  %d = nn.dequantize %x {x_scale = dense<0.02> : tensor<f32>, x_zero_point = dense<0> : tensor<i32>} : tensor<1x2x2x2xi32> -> tensor<1x2x2x2xf32>
  %n = nn.batch_norm %d, %g, %g, %g, %g epsilon 1.0e-05 : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  // expected-remark @+1 {{[fold-qdq] nn.quantize: not folded into a quantized op: nn.batch_norm has no quantized form}}
  %y = nn.quantize %n {y_scale = dense<0.05> : tensor<f32>, y_zero_point = dense<128> : tensor<ui8>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xui8>
  func.return %y : tensor<1x2x2x2xui8>
}
// CHECK-LABEL: func.func @of_i32
// CHECK-NOT:   nn.qbatch_norm
// CHECK:       func.return
