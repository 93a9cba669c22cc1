// transpose_onednn reads its input in the layout it comes in when that layout only orders the
// axes: ConvNeXt's LayerNorm2d (conv -> transpose to [N, H, W, C] -> layer norm over the
// channels -> transpose back) needs no reorder NHWC -> plain between the convolution and the
// transpose on the targets whose convolutions keep NHWC data. The transpose back writes its
// result in NHWC, which the next convolution reads (propagate-layouts'
// TransposeToOrderedLayout): its plain [N, H, W, C] operand already has those bytes, so no
// reorder is left. On channel-blocked data the transpose refuses the layout (a split axis has
// no one stride) and a reorder to plain stays.
// REQUIRES: onednn
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=onednn},insert-layouts,propagate-layouts' | filecheck %s
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics -p 'select-dispatch{target=onednn},insert-layouts,propagate-layouts'
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=onednn-nchw8c},insert-layouts,propagate-layouts' | filecheck %s --check-prefix=BLOCKED
// bufferize then makes both transposes views: the convolution's NHWC bytes are the
// transposed result's row-major bytes, and the layer norm's those of its NHWC transpose
// (lowering/views.py).
// RUN: nnlayout-opt %s --split-input-file -p 'default-pipeline{target=onednn}' | filecheck %s --check-prefix=VIEW

func.func @layer_norm_2d(%x: tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> {
  %w1 = nn.constant dense<0.1> : tensor<20x8x3x3xf32>
  // expected-remark @+1 {{nn.conv2d: operand 0 reordered from plain to NHWC: conv2d_onednn needs NHWC}}
  %c1 = nn.conv2d %x, %w1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x8x6x6xf32>, tensor<20x8x3x3xf32>) -> tensor<1x20x6x6xf32>
  %t = nn.transpose %c1 perm [0, 2, 3, 1] : tensor<1x20x6x6xf32> -> tensor<1x6x6x20xf32>
  %s = nn.constant dense<1.5> : tensor<20xf32>
  %b = nn.constant dense<0.5> : tensor<20xf32>
  %n = nn.layer_norm %t, %s, %b axis -1 epsilon 1.0e-6 : (tensor<1x6x6x20xf32>, tensor<20xf32>, tensor<20xf32>) -> tensor<1x6x6x20xf32>
  %u = nn.transpose %n perm [0, 3, 1, 2] : tensor<1x6x6x20xf32> -> tensor<1x20x6x6xf32>
  %w2 = nn.constant dense<0.2> : tensor<8x20x1x1xf32>
  %c2 = nn.conv2d %u, %w2 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x20x6x6xf32>, tensor<8x20x1x1xf32>) -> tensor<1x8x6x6xf32>
  func.return %c2 : tensor<1x8x6x6xf32>
}
// CHECK-LABEL: func.func @layer_norm_2d
// CHECK:       %c1 = nn.conv2d {{.*}} -> tensor<1x20x6x6xf32, #layout.layout<"NHWC">>
// CHECK-NEXT:  %t = nn.transpose %c1 perm [0, 2, 3, 1] {kernel = #nn.kernel<"transpose_onednn", operands = ["*"], results = [""]>} : tensor<1x20x6x6xf32, #layout.layout<"NHWC">> -> tensor<1x6x6x20xf32>
// CHECK:       %u = nn.transpose %n perm [0, 3, 1, 2] {kernel = #nn.kernel<"transpose_onednn", operands = ["*"], results = ["NHWC"]>} : tensor<1x6x6x20xf32> -> tensor<1x20x6x6xf32, #layout.layout<"NHWC">>
// CHECK-NOT:   layout.reorder %u
// CHECK:       nn.conv2d %u,

// BLOCKED-LABEL: func.func @layer_norm_2d
// BLOCKED:       %c1 = nn.conv2d {{.*}} -> tensor<1x20x6x6xf32, #layout.layout<"NCHW8c">>
// BLOCKED-NEXT:  %c1_1 = layout.reorder %c1 : tensor<1x20x6x6xf32, #layout.layout<"NCHW8c">> -> tensor<1x20x6x6xf32>
// BLOCKED-NEXT:  %t = nn.transpose %c1_1 perm [0, 2, 3, 1] {{.*}} : tensor<1x20x6x6xf32> -> tensor<1x6x6x20xf32>

// VIEW-LABEL: func.func @layer_norm_2d
// VIEW-SAME:    nnlayout.view_copy_bytes_avoided = 5760
// VIEW:         %t = memref.reinterpret_cast %c1 to offset: [0], sizes: [1, 6, 6, 20], strides: [720, 120, 20, 1] : memref<1x6x6x20xf32> to memref<1x6x6x20xf32>
// VIEW:         %u = memref.reinterpret_cast %n to offset: [0], sizes: [1, 6, 6, 20], strides: [720, 120, 20, 1] : memref<1x6x6x20xf32> to memref<1x6x6x20xf32>
// VIEW-NOT:     nn.transpose

// -----

// A ConvNeXt block's end: the transpose back, the layer scale and the residual add, then the
// next block's convolution. The reorder to NHWC is found through the two element-wise ops,
// the transpose writes NHWC, and the mul and add run in NHWC (the scale reordered once, at
// load): no activation reorder is left.
func.func @block_end(%y: tensor<1x6x6x20xf32>, %r: tensor<1x20x6x6xf32>) -> tensor<1x8x6x6xf32> {
  %u = nn.transpose %y perm [0, 3, 1, 2] : tensor<1x6x6x20xf32> -> tensor<1x20x6x6xf32>
  %scale = nn.constant dense<0.5> : tensor<1x20x1x1xf32>
  %m = nn.mul %scale, %u : (tensor<1x20x1x1xf32>, tensor<1x20x6x6xf32>) -> tensor<1x20x6x6xf32>
  %a = nn.add %m, %r : (tensor<1x20x6x6xf32>, tensor<1x20x6x6xf32>) -> tensor<1x20x6x6xf32>
  %w = nn.constant dense<0.2> : tensor<8x20x1x1xf32>
  %c = nn.conv2d %a, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x20x6x6xf32>, tensor<8x20x1x1xf32>) -> tensor<1x8x6x6xf32>
  func.return %c : tensor<1x8x6x6xf32>
}
// CHECK-LABEL: func.func @block_end
// CHECK:       %u = nn.transpose %y perm [0, 3, 1, 2] {{.*}} -> tensor<1x20x6x6xf32, #layout.layout<"NHWC">>
// CHECK:       %m = nn.mul {{.*}} -> tensor<1x20x6x6xf32, #layout.layout<"NHWC">>
// CHECK:       %a = nn.add %m, %r_1 {{.*}} -> tensor<1x20x6x6xf32, #layout.layout<"NHWC">>
// CHECK-NEXT:  %w = nn.constant
// CHECK-NOT:   layout.reorder %a
// CHECK:       nn.conv2d %a,
// VIEW-LABEL:  func.func @block_end
// VIEW:        %u = memref.reinterpret_cast %y
// VIEW-NOT:    nn.transpose
// VIEW-LABEL:  func.func @kept

// -----

// A transpose that no NHWC op reads, and one whose result in NHWC would not have its
// operand's bytes (attention's [B, S, H, D] -> [B, H, S, D]), stay plain.
func.func @kept(%y: tensor<1x6x6x20xf32>, %q: tensor<1x6x4x20xf32>) -> (tensor<1x20x6x6xf32>, tensor<1x8x6x20xf32>) {
  %u = nn.transpose %y perm [0, 3, 1, 2] : tensor<1x6x6x20xf32> -> tensor<1x20x6x6xf32>
  %e = nn.relu %u : tensor<1x20x6x6xf32>
  %h = nn.transpose %q perm [0, 2, 1, 3] : tensor<1x6x4x20xf32> -> tensor<1x4x6x20xf32>
  %w = nn.constant dense<0.2> : tensor<8x4x1x1xf32>
  // expected-remark @+1 {{nn.conv2d: operand 0 reordered from plain to NHWC: conv2d_onednn needs NHWC}}
  %c = nn.conv2d %h, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x4x6x20xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x6x20xf32>
  func.return %e, %c : tensor<1x20x6x6xf32>, tensor<1x8x6x20xf32>
}
// CHECK-LABEL: func.func @kept
// CHECK:       %u = nn.transpose %y perm [0, 3, 1, 2] {{.*}} : tensor<1x6x6x20xf32> -> tensor<1x20x6x6xf32>
// CHECK:       %h = nn.transpose %q perm [0, 2, 1, 3] {{.*}} : tensor<1x6x4x20xf32> -> tensor<1x4x6x20xf32>
// CHECK:       %h_1 = layout.reorder %h : tensor<1x4x6x20xf32> -> tensor<1x4x6x20xf32, #layout.layout<"NHWC">>

// -----

// Hand-written IR whose add broadcasts a rank-3 transpose against a rank-4 value (its kernel
// pinned): the NHWC reorder after the add is of another rank than the transpose's result,
// which stays plain (found by a review: the layout's rank was not checked, and the pass
// failed without a location).
func.func @other_rank(%y: tensor<6x6x20xf32>, %r: tensor<1x20x6x6xf32>) -> tensor<1x8x6x6xf32> {
  %u = nn.transpose %y perm [2, 0, 1] : tensor<6x6x20xf32> -> tensor<20x6x6xf32>
  %a = nn.add %r, %u {kernel = #nn.kernel<"add_onednn", operands = ["*", "*"], results = ["*"], in_place = 0>} : (tensor<1x20x6x6xf32>, tensor<20x6x6xf32>) -> tensor<1x20x6x6xf32>
  %w = nn.constant dense<0.2> : tensor<8x20x3x3xf32>
  // expected-remark @+1 {{nn.conv2d: operand 0 reordered from plain to NHWC: conv2d_onednn needs NHWC}}
  %c = nn.conv2d %a, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x20x6x6xf32>, tensor<8x20x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return %c : tensor<1x8x6x6xf32>
}
// CHECK-LABEL: func.func @other_rank
// CHECK:       %u = nn.transpose %y perm [2, 0, 1] {{.*}} : tensor<6x6x20xf32> -> tensor<20x6x6xf32>
