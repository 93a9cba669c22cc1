// REQUIRES: onednn
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=onednn}' | filecheck %s --check-prefixes=CHECK,%onednn_int8
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=onednn remarks=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// Products and element-wise products of two activations, as a transformer quantized by
// onnxruntime's quantize_static has them. Attention's Q.K^T: b is computed at run time (a
// function argument here), u8 like a, batched over heads. qmatmul_onednn packs a constant b
// once and takes s8 only; qmatmul_runtime_b_onednn reads b on each call, flipped to s8 with its
// zero point moved (VNNI or AMX: INT8; elsewhere oneDNN's int8 matmul saturates and the
// reference kernel runs it).
func.func @scores(%q: tensor<12x197x64xui8>, %kt: tensor<12x64x197xui8>) -> tensor<12x197x197xui8> {
  %s = nn.qmatmul %q, %kt {a_scale = dense<0.03> : tensor<f32>, a_zero_point = dense<120> : tensor<ui8>, b_scale = dense<0.03> : tensor<f32>, b_zero_point = dense<131> : tensor<ui8>, y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<100> : tensor<ui8>} : (tensor<12x197x64xui8>, tensor<12x64x197xui8>) -> tensor<12x197x197xui8>
  func.return %s : tensor<12x197x197xui8>
}
// CHECK-LABEL: func.func @scores
// REMARK: nn.qmatmul: b is computed at run time (the kernel packs a constant b once), not supported by qmatmul_onednn
// INT8: nn.qmatmul {{.*}}kernel = #nn.kernel<"qmatmul_runtime_b_onednn", operands = ["", ""], results = [""]{{.*}}>
// NO-INT8: nn.qmatmul {{.*}}kernel = #nn.kernel<"qmatmul_ref"

// -----

// A GELU's x times its factor, both with zero points (rank 3: plain). qmul_onednn takes zero
// points of 0 only; qmul_zero_points_onednn centres b by a reorder and computes the rest as one
// binary with post-ops (oneDNN's jit:uni code on every ISA).
func.func @gelu_product(%x: tensor<1x197x3072xui8>, %f: tensor<1x197x3072xui8>) -> tensor<1x197x3072xui8> {
  %y = nn.qmul %x, %f {a_scale = dense<0.05> : tensor<f32>, a_zero_point = dense<40> : tensor<ui8>, b_scale = dense<0.008> : tensor<f32>, b_zero_point = dense<3> : tensor<ui8>, y_scale = dense<0.04> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : (tensor<1x197x3072xui8>, tensor<1x197x3072xui8>) -> tensor<1x197x3072xui8>
  func.return %y : tensor<1x197x3072xui8>
}
// CHECK-LABEL: func.func @gelu_product
// REMARK: nn.qmul: a zero point of a or b != 0; {{.*}} not supported by qmul_onednn; using qmul_zero_points_onednn
// CHECK: nn.qmul {{.*}}kernel = #nn.kernel<"qmul_zero_points_onednn", operands = ["", ""], results = [""], in_place = 0{{.*}}>

// -----

// Attention's scores, dequantized for the softmax, quantized again for P.V: rank 4, but
// plain from the product, so the dequantize and the quantize after the (plain) softmax stay
// plain (NHWC, the int8 convolutions' order, would put a reorder on each side).
func.func @softmax_between(%q: tensor<1x4x9x8xui8>, %kt: tensor<1x4x8x9xui8>) -> tensor<1x4x9x9xui8> {
  %s = nn.qmatmul %q, %kt {a_scale = dense<0.03> : tensor<f32>, a_zero_point = dense<120> : tensor<ui8>, b_scale = dense<0.03> : tensor<f32>, b_zero_point = dense<131> : tensor<ui8>, y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<100> : tensor<ui8>} : (tensor<1x4x9x8xui8>, tensor<1x4x8x9xui8>) -> tensor<1x4x9x9xui8>
  %f = nn.dequantize %s {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<100> : tensor<ui8>} : tensor<1x4x9x9xui8> -> tensor<1x4x9x9xf32>
  %p = nn.softmax %f axis -1 : tensor<1x4x9x9xf32>
  %y = nn.quantize %p {y_scale = dense<0.00390625> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : tensor<1x4x9x9xf32> -> tensor<1x4x9x9xui8>
  func.return %y : tensor<1x4x9x9xui8>
}
// CHECK-LABEL: func.func @softmax_between
// CHECK: nn.dequantize {{.*}}#nn.kernel<"dequantize_onednn", operands = [""], results = [""]
// CHECK: nn.softmax {{.*}}results = [""]
// CHECK: nn.quantize {{.*}}#nn.kernel<"quantize_onednn", operands = [""], results = [""]
