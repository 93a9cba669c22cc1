// REQUIRES: onednn
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=onednn},fuse-post-ops' | filecheck %s

// oneDNN takes hardswish, hardsigmoid (with its alpha and beta) and gelu as eltwise post-ops.
func.func @hardswish(%x: tensor<1x16x8x8xf32>, %w: tensor<16x16x3x3xf32>, %b: tensor<16xf32>) -> tensor<1x16x8x8xf32> {
  %c = nn.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
  %y = nn.hardswish %c : tensor<1x16x8x8xf32>
  func.return %y : tensor<1x16x8x8xf32>
}
// CHECK-LABEL: func.func @hardswish
// CHECK-NEXT:    %y = nn.fused_conv2d %x, %w, %b {{.*}} activation "hardswish" {kernel = #nn.kernel<"fused_conv2d_onednn"
// CHECK-NEXT:    func.return %y

// -----

func.func @hardsigmoid(%x: tensor<1x16x8x8xf32>, %w: tensor<16x16x3x3xf32>, %b: tensor<16xf32>) -> tensor<1x16x8x8xf32> {
  %c = nn.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
  %y = nn.hardsigmoid %c alpha 0.166666672 beta 0.5 : tensor<1x16x8x8xf32>
  func.return %y : tensor<1x16x8x8xf32>
}
// CHECK-LABEL: func.func @hardsigmoid
// CHECK-NEXT:    %y = nn.fused_conv2d %x, %w, %b {{.*}} activation "hardsigmoid" alpha 0.166666672 beta 5.000000e-01 {kernel = #nn.kernel<"fused_conv2d_onednn"

// -----

func.func @gelu_tanh(%x: tensor<1x16x8x8xf32>, %w: tensor<16x16x3x3xf32>, %b: tensor<16xf32>) -> tensor<1x16x8x8xf32> {
  %c = nn.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
  %y = nn.gelu %c approximate "tanh" : tensor<1x16x8x8xf32>
  func.return %y : tensor<1x16x8x8xf32>
}
// CHECK-LABEL: func.func @gelu_tanh
// CHECK-NEXT:    %y = nn.fused_conv2d %x, %w, %b {{.*}} activation "gelu" approximate "tanh" {kernel = #nn.kernel<"fused_conv2d_onednn"

// -----

// selu has no oneDNN eltwise: it stays after the convolution, in numpy.
func.func @selu(%x: tensor<1x16x8x8xf32>, %w: tensor<16x16x3x3xf32>, %b: tensor<16xf32>) -> tensor<1x16x8x8xf32> {
  %c = nn.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
  %y = nn.selu %c alpha 1.67326319 gamma 1.05070102 : tensor<1x16x8x8xf32>
  func.return %y : tensor<1x16x8x8xf32>
}
// CHECK-LABEL: func.func @selu
// CHECK-NEXT:    %c = nn.conv2d
// CHECK-NEXT:    %y = nn.selu %c {{.*}}#nn.kernel<"selu_any"
