// REQUIRES: onednn
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=onednn},fuse-post-ops{target=onednn}' | filecheck %s --check-prefixes=CHECK,%onednn_isa
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics -p 'select-dispatch{target=onednn},fuse-post-ops{target=onednn}'
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=avx2},fuse-post-ops{target=avx2}' | filecheck %s --check-prefix=AVX2
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=onednn-nchw8c},fuse-post-ops{target=onednn-nchw8c}' | filecheck %s --check-prefix=BLOCKED
// Without options, fuse-post-ops takes the target select-dispatch recorded on the module.
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=onednn-nchw8c}' | nnlayout-opt --split-input-file -p fuse-post-ops | filecheck %s --check-prefix=BLOCKED

// A residual block's tail: conv -> add -> relu becomes one oneDNN convolution with a sum and
// an eltwise post-op, which may write over the addend (in_place = 3).
func.func @residual(%x: tensor<1x16x14x14xf32>, %w: tensor<16x16x3x3xf32>, %b: tensor<16xf32>, %r: tensor<1x16x14x14xf32>) -> tensor<1x16x14x14xf32> {
  %c = nn.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x14x14xf32>, tensor<16x16x3x3xf32>, tensor<16xf32>) -> tensor<1x16x14x14xf32>
  %s = nn.add %r, %c : (tensor<1x16x14x14xf32>, tensor<1x16x14x14xf32>) -> tensor<1x16x14x14xf32>
  %y = nn.relu %s : tensor<1x16x14x14xf32>
  func.return %y : tensor<1x16x14x14xf32>
}
// CHECK-LABEL: func.func @residual
// CHECK-NEXT:    %y = nn.fused_conv2d %x, %w, %b add %r strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "relu" {kernel = #nn.kernel<"fused_conv2d_sum_onednn", operands = ["NHWC", "OHWI16o", "", "NHWC"], results = ["NHWC"], in_place = 3{{.*}}>}
// CHECK-NEXT:    func.return %y
// A target asking for blocked activations: the fused kernel runs on them.
// BLOCKED-LABEL: func.func @residual
// BLOCKED-NEXT:    %y = nn.fused_conv2d %x, %w, %b add %r {{.*}} activation "relu" {kernel = #nn.kernel<"fused_conv2d_sum_onednn", operands = ["NCHW8c", "OIHW8i8o", "", "NCHW8c"], results = ["NCHW8c"], in_place = 3>}
// AVX2-LABEL: func.func @residual
// AVX2:      nn.conv2d
// AVX2:      nn.add
// AVX2:      nn.relu

// -----

// A convolution without bias gets a zero one; relu's NaN-keeping oneDNN form is used.
func.func @no_bias(%x: tensor<1x16x14x14xf32>, %w: tensor<32x16x1x1xf32>) -> tensor<1x32x14x14xf32> {
  %c = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x16x14x14xf32>, tensor<32x16x1x1xf32>) -> tensor<1x32x14x14xf32>
  %y = nn.sigmoid %c : tensor<1x32x14x14xf32>
  func.return %y : tensor<1x32x14x14xf32>
}
// CHECK-LABEL: func.func @no_bias
// CHECK-NEXT:    %zero_bias = nn.constant dense<0.000000e+00> : tensor<32xf32>
// CHECK-NEXT:    %y = nn.fused_conv2d %x, %w, %zero_bias strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 activation "sigmoid" {kernel = #nn.kernel<"fused_conv2d_onednn"

// -----

// Not fused: a convolution whose result has another use, an add after the activation
// (relu(conv) + r is not relu(conv + r)), and a sigmoid after the convolution that oneDNN runs
// as a gemm, whose logistic post-op drops NaN.
func.func @kept(%x: tensor<1x16x14x14xf32>, %w: tensor<16x16x3x3xf32>, %r: tensor<1x16x14x14xf32>, %g: tensor<1x16x1x4xf32>, %wg: tensor<8x4x2x2xf32>) -> (tensor<1x16x14x14xf32>, tensor<1x16x14x14xf32>, tensor<1x16x14x14xf32>, tensor<1x8x2x3xf32>) {
  %c2 = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x14x14xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x14x14xf32>
  %t = nn.tanh %c2 : tensor<1x16x14x14xf32>
  %u = nn.add %c2, %r : (tensor<1x16x14x14xf32>, tensor<1x16x14x14xf32>) -> tensor<1x16x14x14xf32>
  %c3 = nn.conv2d %u, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x14x14xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x14x14xf32>
  %a = nn.relu %c3 : tensor<1x16x14x14xf32>
  %v = nn.add %a, %r : (tensor<1x16x14x14xf32>, tensor<1x16x14x14xf32>) -> tensor<1x16x14x14xf32>
  %c4 = nn.conv2d %g, %wg strides [1, 2] pads [1, 0, 1, 2] dilations [1, 1] groups 4 : (tensor<1x16x1x4xf32>, tensor<8x4x2x2xf32>) -> tensor<1x8x2x3xf32>
  // expected-remark @+1 {{not fused into nn.conv2d (conv2d_onednn): oneDNN's x64:gemm:jit applies its sigmoid post-op without NaN}}
  %s = nn.sigmoid %c4 : tensor<1x8x2x3xf32>
  func.return %t, %u, %v, %s : tensor<1x16x14x14xf32>, tensor<1x16x14x14xf32>, tensor<1x16x14x14xf32>, tensor<1x8x2x3xf32>
}
// CHECK-LABEL: func.func @kept
// CHECK:         %t = nn.tanh %c2
// CHECK-NEXT:    %u = nn.add %c2, %r
// CHECK:         %a = nn.fused_conv2d %u, %w, %zero_bias {{.*}} activation "relu"
// CHECK-NEXT:    %v = nn.add %a, %r
// CHECK:         %s = nn.sigmoid %c4

// -----

// clip fuses: by default exact (the primitive, then numpy's clip; oneDNN's clip post-op, which
// turns NaN into a bound, only on calls whose operands are finite and cannot overflow), with
// nnan=true (fast math: no NaN reaches an activation) always oneDNN's clip.
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=onednn},fuse-post-ops{target=onednn nnan=true}' | filecheck %s --check-prefix=NNAN
func.func @relu6(%x: tensor<1x16x14x14xf32>, %w: tensor<16x16x3x3xf32>, %b: tensor<16xf32>) -> tensor<1x16x14x14xf32> {
  %c = nn.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x14x14xf32>, tensor<16x16x3x3xf32>, tensor<16xf32>) -> tensor<1x16x14x14xf32>
  %y = nn.clip %c min 0.0 max 6.0 : tensor<1x16x14x14xf32>
  func.return %y : tensor<1x16x14x14xf32>
}
// NNAN-LABEL: func.func @relu6
// NNAN-NEXT:    %y = nn.fused_conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "clip" min 0.000000e+00 max 6.000000e+00 nnan {kernel = #nn.kernel<"fused_conv2d_onednn"
// CHECK-LABEL: func.func @relu6
// CHECK-NEXT:    %y = nn.fused_conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "clip" min 0.000000e+00 max 6.000000e+00 {kernel = #nn.kernel<"fused_conv2d_onednn"

// -----

// batch norm -> relu (DenseNet's pre-activation) becomes one depthwise 1x1 convolution with
// the relu fused: weight s = scale / sqrt(var + eps) and bias shift - mean * s, computed from
// the constants at load. A batch norm whose result is also used elsewhere stays.
func.func @norm_relu(%x: tensor<1x16x14x14xf32>) -> (tensor<1x16x14x14xf32>, tensor<1x16x14x14xf32>, tensor<1x16x14x14xf32>) {
  %scale = nn.constant dense<2.0> : tensor<16xf32>
  %shift = nn.constant dense<0.5> : tensor<16xf32>
  %mean = nn.constant dense<0.25> : tensor<16xf32>
  %var = nn.constant dense<4.0> : tensor<16xf32>
  %n = nn.batch_norm %x, %scale, %shift, %mean, %var epsilon 1.0e-05 : (tensor<1x16x14x14xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x14x14xf32>
  %y = nn.relu %n : tensor<1x16x14x14xf32>
  %m = nn.batch_norm %y, %scale, %shift, %mean, %var epsilon 1.0e-05 : (tensor<1x16x14x14xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x14x14xf32>
  %z = nn.relu %m : tensor<1x16x14x14xf32>
  func.return %y, %z, %m : tensor<1x16x14x14xf32>, tensor<1x16x14x14xf32>, tensor<1x16x14x14xf32>
}
// CHECK-LABEL: func.func @norm_relu
// CHECK:         %[[EPS:.*]] = nn.constant dense<1.000000e-05> : tensor<16xf32>
// CHECK-NEXT:    %[[VAR:.*]] = nn.add %var, %[[EPS]]
// CHECK-NEXT:    %[[DEV:.*]] = nn.sqrt %[[VAR]]
// CHECK-NEXT:    %[[S:.*]] = nn.div %scale, %[[DEV]]
// CHECK-NEXT:    %scale_1 = nn.reshape %[[S]] : tensor<16xf32> -> tensor<16x1x1x1xf32>
// CHECK-NEXT:    %[[ZERO:.*]] = nn.constant dense<0.000000e+00> : tensor<16xf32>
// CHECK-NEXT:    %[[SHIFTED:.*]] = nn.sub %[[ZERO]], %mean
// CHECK-NEXT:    %[[SCALED:.*]] = nn.mul %[[SHIFTED]], %[[S]]
// CHECK-NEXT:    %shift_1 = nn.add %[[SCALED]], %shift
// ISA-AVX2-NEXT:   %y = nn.fused_conv2d %x, %scale_1, %shift_1 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 16 activation "relu" {kernel = #nn.kernel<"fused_conv2d_onednn", operands = ["NHWC", "HWIO8o", ""], results = ["NHWC"]{{.*}}>}
// ISA-AVX512-NEXT: %y = nn.fused_conv2d %x, %scale_1, %shift_1 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 16 activation "relu" {kernel = #nn.kernel<"fused_conv2d_onednn", operands = ["NHWC", "OIHW16o", ""], results = ["NHWC"]{{.*}}>}
// CHECK-NEXT:    %m = nn.batch_norm %y, %scale, %shift, %mean, %var {{.*}}batch_norm_onednn
// CHECK-NEXT:    %z = nn.relu %m
// BLOCKED-LABEL: func.func @norm_relu
// BLOCKED:         %y = nn.fused_conv2d %x, %scale_1, %shift_1 {{.*}} groups 16 activation "relu" {kernel = #nn.kernel<"fused_conv2d_onednn", operands = ["NCHW8c", "OIHW8o", ""], results = ["NCHW8c"]>}
// AVX2-LABEL: func.func @norm_relu
// AVX2:          %n = nn.batch_norm
// AVX2-NEXT:     %y = nn.relu %n
