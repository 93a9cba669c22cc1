// A segmentation head returns its logits upsampled: the reorder back to plain is hoisted
// above the resize (HoistReorderAboveUpsampling), converting 1x21x8x8 rather than
// 1x21x32x32, and the resize runs plain. A resize read by another op, and a pad that grows
// by less than twice, keep their propagated layout.
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=avx2},insert-layouts,propagate-layouts' | filecheck %s
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics -p 'select-dispatch{target=avx2},insert-layouts,propagate-layouts'
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=onednn},insert-layouts,propagate-layouts' | filecheck %s --check-prefix=ONEDNN

func.func @head(%x: tensor<1x16x8x8xf32>) -> tensor<1x21x32x32xf32> {
  %w = nn.constant dense<0.1> : tensor<21x16x3x3xf32>
  // expected-remark @+2 {{%c: axis 1 (C) padded from 21 to 24 in NCHW8c}}
  // expected-remark @+1 {{operand 0 reordered from plain to NCHW8c: conv2d_nchwc needs NCHW8c}}
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x8x8xf32>, tensor<21x16x3x3xf32>) -> tensor<1x21x8x8xf32>
  %y = nn.resize %c mode "linear" coordinates "half_pixel" nearest "floor" scales [4.0, 4.0] : tensor<1x21x8x8xf32> -> tensor<1x21x32x32xf32>
  func.return %y : tensor<1x21x32x32xf32>
}
// CHECK-LABEL: func.func @head
// CHECK:      %c = nn.conv2d {{.*}} -> tensor<1x21x8x8xf32, #layout.layout<"NCHW8c">>
// CHECK-NEXT: %c_1 = layout.reorder %c : tensor<1x21x8x8xf32, #layout.layout<"NCHW8c">> -> tensor<1x21x8x8xf32>
// CHECK-NEXT: %y = nn.resize %c_1 {{.*}}"resize_any"{{.*}} : tensor<1x21x8x8xf32> -> tensor<1x21x32x32xf32>
// CHECK-NEXT: func.return %y
// ONEDNN-LABEL: func.func @head
// ONEDNN:      %c = nn.conv2d {{.*}} -> tensor<1x21x8x8xf32, #layout.layout<"[[L:[A-Za-z0-9]+]]">>
// ONEDNN-NEXT: %c_1 = layout.reorder %c : tensor<1x21x8x8xf32, #layout.layout<"[[L]]">> -> tensor<1x21x8x8xf32>
// ONEDNN-NEXT: %y = nn.resize %c_1 {{.*}}"resize_onednn"{{.*}} : tensor<1x21x8x8xf32> -> tensor<1x21x32x32xf32>
// ONEDNN-NEXT: func.return %y

// -----

func.func @kept(%x: tensor<1x16x8x8xf32>) -> (tensor<1x16x16x16xf32>, tensor<1x16x10x10xf32>) {
  %w = nn.constant dense<0.1> : tensor<16x16x3x3xf32>
  // expected-remark @+1 {{operand 0 reordered from plain to NCHW8c: conv2d_nchwc needs NCHW8c}}
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %r = nn.resize %c mode "linear" coordinates "half_pixel" nearest "floor" scales [2.0, 2.0] : tensor<1x16x8x8xf32> -> tensor<1x16x16x16xf32>
  %s = nn.relu %r : tensor<1x16x16x16xf32>
  %p = nn.pad %c pads [0, 0, 1, 1, 0, 0, 1, 1] mode "constant" value 0.0 : tensor<1x16x8x8xf32> -> tensor<1x16x10x10xf32>
  func.return %s, %p : tensor<1x16x16x16xf32>, tensor<1x16x10x10xf32>
}
// CHECK-LABEL: func.func @kept
// CHECK:      %r = nn.resize %c {{.*}} -> tensor<1x16x16x16xf32, #layout.layout<"NCHW8c">>
// CHECK-NEXT: %s = nn.relu %r {{.*}} : tensor<1x16x16x16xf32, #layout.layout<"NCHW8c">>
// CHECK:      %p = nn.pad %c {{.*}} -> tensor<1x16x10x10xf32, #layout.layout<"NCHW8c">>
