// Layout decisions of the data-movement ops on avx2: a channel slice off the block boundary,
// a constant pad of H and W (value 2: padding lanes re-zeroed by pad_any), a resize (read by
// a relu: a resize returned runs plain, see propagate-layouts-upsampling.mlir) and a channel
// shuffle all run in NCHW8c; a pad of the channel axis runs plain, with the reasons.
// RUN: nnlayout-opt %s -p 'select-dispatch{target=avx2},insert-layouts,propagate-layouts' | filecheck %s
// RUN: nnlayout-opt %s --verify-diagnostics -p 'select-dispatch{target=avx2},insert-layouts,propagate-layouts'

func.func @movement(%x: tensor<1x20x8x8xf32>) -> (tensor<1x20x8x8xf32>, tensor<1x24x8x8xf32>, tensor<1x20x16x16xf32>, tensor<1x9x10x10xf32>) {
  %w = nn.constant dense<0.1> : tensor<20x20x3x3xf32>
  // expected-remark @+3 {{operand 0 reordered from plain to NCHW8c: conv2d_nchwc needs NCHW8c}}
  // expected-remark @+2 {{[propagate-layouts] layout.reorder: %x: axis 1 (C) padded from 20 to 24 in NCHW8c}}
  // expected-remark @+1 {{[propagate-layouts] nn.conv2d: %c: axis 1 (C) padded from 20 to 24 in NCHW8c}}
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x20x8x8xf32>, tensor<20x20x3x3xf32>) -> tensor<1x20x8x8xf32>
  // expected-remark @+1 {{%s: axis 1 (C) padded from 9 to 16 in NCHW8c}}
  %s = nn.slice %c starts [0, 3, 0, 0] sizes [1, 9, 8, 8] steps [1, 2, 1, 1] : tensor<1x20x8x8xf32> -> tensor<1x9x8x8xf32>
  // expected-remark @+2 {{[select-dispatch] nn.pad: pads [0, 2, 0, 0, 0, 2, 0, 0] pad the N or C axis; the kernel pads H and W only, not supported by pad_any; using pad_ref}}
  // expected-remark @+1 {{[propagate-layouts] nn.pad: operand 0 reordered from NCHW8c to plain: pad_ref needs plain}}
  %p = nn.pad %c pads [0, 2, 0, 0, 0, 2, 0, 0] mode "constant" value 0.0 : tensor<1x20x8x8xf32> -> tensor<1x24x8x8xf32>
  // expected-remark @+1 {{%q: axis 1 (C) padded from 9 to 16 in NCHW8c}}
  %q = nn.pad %s pads [0, 0, 1, 1, 0, 0, 1, 1] mode "constant" value 2.0 : tensor<1x9x8x8xf32> -> tensor<1x9x10x10xf32>
  // expected-remark @+1 {{%r: axis 1 (C) padded from 20 to 24 in NCHW8c}}
  %r = nn.resize %c mode "linear" coordinates "half_pixel" nearest "floor" scales [2.0, 2.0] : tensor<1x20x8x8xf32> -> tensor<1x20x16x16xf32>
  // expected-remark @+1 {{%rr: axis 1 (C) padded from 20 to 24 in NCHW8c}}
  %rr = nn.relu %r : tensor<1x20x16x16xf32>
  // expected-remark @+1 {{%h: axis 1 (C) padded from 20 to 24 in NCHW8c}}
  %h = nn.channel_shuffle %c groups 4 : tensor<1x20x8x8xf32>
  func.return %h, %p, %rr, %q : tensor<1x20x8x8xf32>, tensor<1x24x8x8xf32>, tensor<1x20x16x16xf32>, tensor<1x9x10x10xf32>
}
// CHECK-LABEL: func.func @movement
// CHECK:      %c = nn.conv2d {{.*}} -> tensor<1x20x8x8xf32, #layout.layout<"NCHW8c">>
// CHECK:      %s = nn.slice %c {{.*}}"slice_any"{{.*}} : tensor<1x20x8x8xf32, #layout.layout<"NCHW8c">> -> tensor<1x9x8x8xf32, #layout.layout<"NCHW8c">>
// CHECK:      nn.pad %c_1 {{.*}}"pad_ref"{{.*}} : tensor<1x20x8x8xf32> -> tensor<1x24x8x8xf32>
// CHECK:      %q = nn.pad %s {{.*}}"pad_any"{{.*}} -> tensor<1x9x10x10xf32, #layout.layout<"NCHW8c">>
// CHECK:      %r = nn.resize %c {{.*}}"resize_any"{{.*}} -> tensor<1x20x16x16xf32, #layout.layout<"NCHW8c">>
// CHECK:      %rr = nn.relu %r {{.*}}"relu_any"{{.*}} : tensor<1x20x16x16xf32, #layout.layout<"NCHW8c">>
// CHECK:      %h = nn.channel_shuffle %c groups 4 {{.*}}"channel_shuffle_any"{{.*}} : tensor<1x20x8x8xf32, #layout.layout<"NCHW8c">>
