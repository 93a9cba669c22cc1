// transpose_onednn reads its input in the layout it comes in when that layout only orders the
// axes: ConvNeXt's LayerNorm2d (conv -> transpose to [N, H, W, C] -> layer norm over the
// channels -> transpose back) needs no reorder NHWC -> plain between the convolution and the
// transpose on the targets whose convolutions keep NHWC data. The result stays plain, so a
// reorder into the next convolution's NHWC remains. On channel-blocked data the transpose
// refuses the layout (a split axis has no one stride) and a reorder to plain stays.
// REQUIRES: onednn
// RUN: nnlayout-opt %s -p 'select-dispatch{target=onednn},insert-layouts,propagate-layouts' | filecheck %s
// RUN: nnlayout-opt %s --verify-diagnostics -p 'select-dispatch{target=onednn},insert-layouts,propagate-layouts'
// RUN: nnlayout-opt %s -p 'select-dispatch{target=onednn-nchw8c},insert-layouts,propagate-layouts' | filecheck %s --check-prefix=BLOCKED
// bufferize then makes the first transpose a view: the convolution's NHWC bytes are the
// transposed result's row-major bytes (lowering/views.py).
// RUN: nnlayout-opt %s -p 'default-pipeline{target=onednn}' | filecheck %s --check-prefix=VIEW

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
  // expected-remark @+1 {{nn.conv2d: operand 0 reordered from plain to NHWC: conv2d_onednn needs NHWC}}
  %c2 = nn.conv2d %u, %w2 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x20x6x6xf32>, tensor<8x20x1x1xf32>) -> tensor<1x8x6x6xf32>
  func.return %c2 : tensor<1x8x6x6xf32>
}
// CHECK-LABEL: func.func @layer_norm_2d
// CHECK:       %c1 = nn.conv2d {{.*}} -> tensor<1x20x6x6xf32, #layout.layout<"NHWC">>
// CHECK-NEXT:  %t = nn.transpose %c1 perm [0, 2, 3, 1] {kernel = #nn.kernel<"transpose_onednn", operands = ["*"], results = [""]>} : tensor<1x20x6x6xf32, #layout.layout<"NHWC">> -> tensor<1x6x6x20xf32>
// CHECK:       %u = nn.transpose %n perm [0, 3, 1, 2] {{.*}} : tensor<1x6x6x20xf32> -> tensor<1x20x6x6xf32>
// CHECK:       %u_1 = layout.reorder %u : tensor<1x20x6x6xf32> -> tensor<1x20x6x6xf32, #layout.layout<"NHWC">>

// BLOCKED-LABEL: func.func @layer_norm_2d
// BLOCKED:       %c1 = nn.conv2d {{.*}} -> tensor<1x20x6x6xf32, #layout.layout<"NCHW8c">>
// BLOCKED-NEXT:  %c1_1 = layout.reorder %c1 : tensor<1x20x6x6xf32, #layout.layout<"NCHW8c">> -> tensor<1x20x6x6xf32>
// BLOCKED-NEXT:  %t = nn.transpose %c1_1 perm [0, 2, 3, 1] {{.*}} : tensor<1x20x6x6xf32> -> tensor<1x6x6x20xf32>

// VIEW-LABEL: func.func @layer_norm_2d
// VIEW-SAME:    nnlayout.view_copy_bytes_avoided = 2880
// VIEW:         %t = memref.reinterpret_cast %c1 to offset: [0], sizes: [1, 6, 6, 20], strides: [720, 120, 20, 1] : memref<1x6x6x20xf32> to memref<1x6x6x20xf32>
// VIEW-NOT:     nn.transpose %c1
// VIEW:         nn.transpose %n_{{[0-9]+}} perm [0, 3, 1, 2]
