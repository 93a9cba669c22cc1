// REQUIRES: onednn
// The int8 residual add: qconv2d -> qadd becomes one `nn.qconv2d_add`, oneDNN's int8
// convolution with the add as a sum post-op (the convolution's requantization kept as
// post-ops), which may write over the addend (in_place = 3, 2 without bias). Where oneDNN
// has no VNNI or AMX code (ONEDNN_MAX_CPU_ISA=AVX2) the convolution runs qconv2d_ref and
// nothing is fused; numpy targets never fuse.
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=onednn},fuse-post-ops' | filecheck %s --check-prefix=%onednn_int8
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=avx512},fuse-post-ops' | filecheck %s --check-prefix=NO-INT8
// The plan: the fused result shares the addend's buffer.
// RUN: nnlayout-opt %s --split-input-file -p 'default-pipeline{target=onednn}' | filecheck %s --check-prefix=PLAN-%onednn_int8

// A bottleneck's tail: %r (the block's input) + the last convolution, ui8 with zero points
// != 0 (x's zero point fills the convolution's padding; r's is the sum's zero point).
func.func @residual(%x: tensor<1x16x8x8xui8>, %w: tensor<16x16x3x3xi8>, %b: tensor<16xi32>, %r: tensor<1x16x8x8xui8>) -> tensor<1x16x8x8xui8> {
  %c = nn.qconv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {w_scale = dense<0.01> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.02> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>, y_scale = dense<0.05> : tensor<f32>, y_zero_point = dense<120> : tensor<ui8>} : (tensor<1x16x8x8xui8>, tensor<16x16x3x3xi8>, tensor<16xi32>) -> tensor<1x16x8x8xui8>
  %y = nn.qadd %c, %r {a_scale = dense<0.05> : tensor<f32>, a_zero_point = dense<120> : tensor<ui8>, b_scale = dense<0.04> : tensor<f32>, b_zero_point = dense<130> : tensor<ui8>, y_scale = dense<0.06> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : (tensor<1x16x8x8xui8>, tensor<1x16x8x8xui8>) -> tensor<1x16x8x8xui8>
  func.return %y : tensor<1x16x8x8xui8>
}
// INT8-LABEL: func.func @residual
// INT8-NEXT:    %y = nn.qconv2d_add %x, %w, %b add %r strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {kernel = #nn.kernel<"qconv2d_add_onednn", operands = ["NHWC", "", "", "NHWC"], results = ["NHWC"], in_place = 3{{.*}}>, c_scale = dense<5.000000e-02> : tensor<f32>, c_zero_point = dense<120> : tensor<ui8>, r_scale = dense<4.000000e-02> : tensor<f32>, r_zero_point = dense<130> : tensor<ui8>, {{.*}}y_scale = dense<6.000000e-02> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>}
// INT8-NEXT:    func.return %y
// NO-INT8-LABEL: func.func @residual
// NO-INT8:       nn.qconv2d {{.*}}qconv2d_ref
// NO-INT8:       nn.qadd
// PLAN-INT8-LABEL: func.func @residual
// PLAN-INT8:       %y = memref.view %arena[%{{.*}}]
// PLAN-INT8:       nn.qconv2d_add {{.*}}in_place = 3
// PLAN-NO-INT8-LABEL: func.func @residual
// PLAN-NO-INT8:       nn.qadd

// -----

// The convolution's result read by the add with other parameters than it was written with
// (hand-written IR; QDQ models never do this): not fused. Nor is a result with another use.
func.func @not_fused(%x: tensor<1x16x8x8xui8>, %w: tensor<16x16x1x1xi8>, %r: tensor<1x16x8x8xui8>) -> (tensor<1x16x8x8xui8>, tensor<1x16x8x8xui8>) {
  %c = nn.qconv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {w_scale = dense<0.01> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.02> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>, y_scale = dense<0.05> : tensor<f32>, y_zero_point = dense<120> : tensor<ui8>} : (tensor<1x16x8x8xui8>, tensor<16x16x1x1xi8>) -> tensor<1x16x8x8xui8>
  %y = nn.qadd %c, %r {a_scale = dense<0.05> : tensor<f32>, a_zero_point = dense<121> : tensor<ui8>, b_scale = dense<0.04> : tensor<f32>, b_zero_point = dense<130> : tensor<ui8>, y_scale = dense<0.06> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : (tensor<1x16x8x8xui8>, tensor<1x16x8x8xui8>) -> tensor<1x16x8x8xui8>
  %d = nn.qconv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {w_scale = dense<0.01> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.02> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>, y_scale = dense<0.05> : tensor<f32>, y_zero_point = dense<120> : tensor<ui8>} : (tensor<1x16x8x8xui8>, tensor<16x16x1x1xi8>) -> tensor<1x16x8x8xui8>
  %z = nn.qadd %r, %d {a_scale = dense<0.04> : tensor<f32>, a_zero_point = dense<130> : tensor<ui8>, b_scale = dense<0.05> : tensor<f32>, b_zero_point = dense<120> : tensor<ui8>, y_scale = dense<0.06> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : (tensor<1x16x8x8xui8>, tensor<1x16x8x8xui8>) -> tensor<1x16x8x8xui8>
  %u = nn.qadd %z, %d {a_scale = dense<0.06> : tensor<f32>, a_zero_point = dense<0> : tensor<ui8>, b_scale = dense<0.05> : tensor<f32>, b_zero_point = dense<120> : tensor<ui8>, y_scale = dense<0.06> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : (tensor<1x16x8x8xui8>, tensor<1x16x8x8xui8>) -> tensor<1x16x8x8xui8>
  func.return %y, %u : tensor<1x16x8x8xui8>, tensor<1x16x8x8xui8>
}
// INT8-LABEL: func.func @not_fused
// INT8-NOT:     nn.qconv2d_add
// INT8:         func.return
// NO-INT8-LABEL: func.func @not_fused
// NO-INT8-NOT:   nn.qconv2d_add

// -----

// A convolution with an activation of its real result (fold-qdq's, from torch's x86
// exports): nn.qconv2d_add's c is requantized only, so the add is not fused.
func.func @activated_not_fused(%x: tensor<1x16x8x8xui8>, %w: tensor<16x16x1x1xi8>, %r: tensor<1x16x8x8xui8>) -> tensor<1x16x8x8xui8> {
  %c = nn.qconv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 activation "swish" {w_scale = dense<0.01> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.02> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>, y_scale = dense<0.05> : tensor<f32>, y_zero_point = dense<120> : tensor<ui8>} : (tensor<1x16x8x8xui8>, tensor<16x16x1x1xi8>) -> tensor<1x16x8x8xui8>
  %y = nn.qadd %c, %r {a_scale = dense<0.05> : tensor<f32>, a_zero_point = dense<120> : tensor<ui8>, b_scale = dense<0.04> : tensor<f32>, b_zero_point = dense<130> : tensor<ui8>, y_scale = dense<0.06> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : (tensor<1x16x8x8xui8>, tensor<1x16x8x8xui8>) -> tensor<1x16x8x8xui8>
  func.return %y : tensor<1x16x8x8xui8>
}
// INT8-LABEL: func.func @activated_not_fused
// INT8-NEXT:    %c = nn.qconv2d {{.*}} activation "swish" {kernel = #nn.kernel<"qconv2d_onednn"
// INT8-NEXT:    %y = nn.qadd
// NO-INT8-LABEL: func.func @activated_not_fused
// NO-INT8-NOT:   nn.qconv2d_add

// -----

// A bottleneck with a downsampling shortcut computed first (onnxruntime's quantizer orders
// ResNet-50 so): once the last convolution adds it in place, the shortcut moves to just
// before it, where its result is no longer live beside the main path's (the most bytes live
// at once between them: 2304 + 1152 + 1152 before, 2304 + 1152 + 288 after; the weights
// are constants, which live outside the arena).
func.func @shortcut_last(%x: tensor<1x64x6x6xui8>) -> tensor<1x32x6x6xui8> {
  %w1 = nn.constant dense<3> : tensor<32x64x1x1xi8>
  %w2 = nn.constant dense<-2> : tensor<8x32x1x1xi8>
  %w3 = nn.constant dense<1> : tensor<32x8x1x1xi8>
  %wd = nn.constant dense<-1> : tensor<32x64x1x1xi8>
  %d = nn.qconv2d %x, %wd strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {w_scale = dense<0.01> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.02> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>, y_scale = dense<0.04> : tensor<f32>, y_zero_point = dense<130> : tensor<ui8>} : (tensor<1x64x6x6xui8>, tensor<32x64x1x1xi8>) -> tensor<1x32x6x6xui8>
  %c1 = nn.qconv2d %x, %w1 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {clamp_min = 0 : i64, w_scale = dense<0.01> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.02> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>, y_scale = dense<0.04> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : (tensor<1x64x6x6xui8>, tensor<32x64x1x1xi8>) -> tensor<1x32x6x6xui8>
  %c2 = nn.qconv2d %c1, %w2 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {clamp_min = 0 : i64, w_scale = dense<0.01> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.04> : tensor<f32>, x_zero_point = dense<0> : tensor<ui8>, y_scale = dense<0.04> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : (tensor<1x32x6x6xui8>, tensor<8x32x1x1xi8>) -> tensor<1x8x6x6xui8>
  %c3 = nn.qconv2d %c2, %w3 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {w_scale = dense<0.01> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.04> : tensor<f32>, x_zero_point = dense<0> : tensor<ui8>, y_scale = dense<0.05> : tensor<f32>, y_zero_point = dense<120> : tensor<ui8>} : (tensor<1x8x6x6xui8>, tensor<32x8x1x1xi8>) -> tensor<1x32x6x6xui8>
  %y = nn.qadd %c3, %d {a_scale = dense<0.05> : tensor<f32>, a_zero_point = dense<120> : tensor<ui8>, b_scale = dense<0.04> : tensor<f32>, b_zero_point = dense<130> : tensor<ui8>, y_scale = dense<0.06> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>} : (tensor<1x32x6x6xui8>, tensor<1x32x6x6xui8>) -> tensor<1x32x6x6xui8>
  func.return %y : tensor<1x32x6x6xui8>
}
// INT8-LABEL: func.func @shortcut_last
// INT8:         %c1 = nn.qconv2d %x, %w1
// INT8-NEXT:    %c2 = nn.qconv2d %c1, %w2
// INT8-NEXT:    %d = nn.qconv2d %x, %wd
// INT8-NEXT:    %y = nn.qconv2d_add %c2, %w3 add %d
// INT8-NEXT:    func.return %y
// NO-INT8-LABEL: func.func @shortcut_last
// NO-INT8:         %d = nn.qconv2d %x, %wd
// NO-INT8-NEXT:    %c1 = nn.qconv2d %x, %w1
