// REQUIRES: onednn
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=onednn}' | filecheck %s
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics -p 'select-dispatch{target=onednn remarks=true}'

// A reduction over the trailing axes of plain data (a transformer's mean over its channels):
// oneDNN's reduction, in its operand's layout.
func.func @tokens(%t: tensor<2x7x20xf32>) -> tensor<2x7x1xf32> {
  %0 = nn.reduce %t kind "mean" axes [2] : tensor<2x7x20xf32> -> tensor<2x7x1xf32>
  func.return %0 : tensor<2x7x1xf32>
}
// CHECK-LABEL: func.func @tokens
// CHECK: nn.reduce %t kind "mean" axes [2] {kernel = #nn.kernel<"reduce_onednn", operands = ["*"], results = ["*"]{{.*}}>}

// -----

// What oneDNN has no fast code or no algorithm for runs in numpy, in its operand's layout
// (the blocked family's reduction), and says why.
func.func @fallbacks(%x: tensor<1x20x5x5xf32>) -> (tensor<1x1x5x5xf32>, tensor<1x20x5x1xf32>) {
  // expected-remark @+1 {{nn.reduce: oneDNN chose ref:any for plain data, not supported by reduce_onednn; using reduce_any}}
  %0 = nn.reduce %x kind "max" axes [1] : tensor<1x20x5x5xf32> -> tensor<1x1x5x5xf32>
  // expected-remark @+1 {{nn.reduce: kind 'log_sum' has no oneDNN reduction algorithm, not supported by reduce_onednn; using reduce_any}}
  %1 = nn.reduce %x kind "log_sum" axes [3] : tensor<1x20x5x5xf32> -> tensor<1x20x5x1xf32>
  func.return %0, %1 : tensor<1x1x5x5xf32>, tensor<1x20x5x1xf32>
}
// CHECK-LABEL: func.func @fallbacks
// CHECK: nn.reduce %x kind "max" axes [1] {kernel = #nn.kernel<"reduce_any", operands = ["*"]
// CHECK: nn.reduce %x kind "log_sum" axes [3] {kernel = #nn.kernel<"reduce_any", operands = ["*"]

// -----

// Layer norm over any axis: oneDNN's, on the input seen as rows of normalised elements, plain;
// a scale or bias that broadcasts is not one per element.
func.func @layer_norm(%x: tensor<2x4x5xf32>, %s: tensor<4x5xf32>, %b: tensor<5xf32>) -> (tensor<2x4x5xf32>, tensor<2x4x5xf32>) {
  %0 = nn.layer_norm %x, %s axis 1 epsilon 1.0e-5 : (tensor<2x4x5xf32>, tensor<4x5xf32>) -> tensor<2x4x5xf32>
  // expected-remark @+1 {{nn.layer_norm: its bias broadcasts; oneDNN's layer normalization takes one per normalised element, not supported by layer_norm_onednn; using layer_norm_ref}}
  %1 = nn.layer_norm %x, %s, %b axis 1 epsilon 1.0e-5 : (tensor<2x4x5xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<2x4x5xf32>
  func.return %0, %1 : tensor<2x4x5xf32>, tensor<2x4x5xf32>
}
// CHECK-LABEL: func.func @layer_norm
// CHECK: nn.layer_norm %x, %s axis 1 {{.*}} {kernel = #nn.kernel<"layer_norm_onednn", operands = ["", ""], results = [""]{{.*}}>}
// CHECK: nn.layer_norm %x, %s, %b axis 1 {{.*}} {kernel = #nn.kernel<"layer_norm_ref"

// -----

// LRN in NHWC, where oneDNN's avx2 and avx512 code both run a window of 5 over 32 channels;
// an even size is not ONNX's window in oneDNN.
func.func @lrn(%x: tensor<1x32x5x5xf32>) -> (tensor<1x32x5x5xf32>, tensor<1x32x5x5xf32>) {
  %0 = nn.lrn %x size 5 alpha 1.0e-4 beta 0.75 bias 1.0 : tensor<1x32x5x5xf32>
  // expected-remark @+1 {{nn.lrn: an even size: oneDNN's window is not ONNX's then, not supported by lrn_onednn; using lrn_ref}}
  %1 = nn.lrn %x size 4 alpha 1.0e-4 beta 0.75 bias 1.0 : tensor<1x32x5x5xf32>
  func.return %0, %1 : tensor<1x32x5x5xf32>, tensor<1x32x5x5xf32>
}
// CHECK-LABEL: func.func @lrn
// CHECK: nn.lrn %x size 5 {{.*}} {kernel = #nn.kernel<"lrn_onednn", operands = ["NHWC"], results = ["NHWC"]{{.*}}>}
// CHECK: nn.lrn %x size 4 {{.*}} {kernel = #nn.kernel<"lrn_ref"
