// oneDNN's resampling takes the resizes whose taps are its own (half_pixel linear); others
// stay with numpy kernels, saying why; its shuffle runs on the target's nChw16c where oneDNN
// runs its avx512_core code (else the convolutions' data is NHWC, and oneDNN's reorder
// between strided descriptors shuffles it there).
// REQUIRES: onednn
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=onednn-nchw16c},insert-layouts,propagate-layouts' | filecheck %s --check-prefixes=CHECK,%onednn_isa
// The remarks on a target whose choices do not depend on the instruction set, then the one
// onednn-nchw16c adds where oneDNN lacks avx512_core:
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics -p 'select-dispatch{target=onednn}'
// RUN: nnlayout-opt %s --split-input-file --remarks -p 'select-dispatch{target=onednn-nchw16c}' -o /dev/null 2>&1 | filecheck %s --check-prefix=REMARK-%onednn_isa
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=onednn},insert-layouts,propagate-layouts' | filecheck %s --check-prefix=PLAIN

func.func @movement(%x: tensor<1x20x8x8xf32>) -> (tensor<1x20x16x16xf32>, tensor<1x20x16x16xf32>, tensor<1x20x8x8xf32>) {
  %w = nn.constant dense<0.1> : tensor<20x20x3x3xf32>
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x20x8x8xf32>, tensor<20x20x3x3xf32>) -> tensor<1x20x8x8xf32>
  %a = nn.resize %c mode "linear" coordinates "half_pixel" nearest "floor" scales [2.0, 2.0] : tensor<1x20x8x8xf32> -> tensor<1x20x16x16xf32>
  // expected-remark @+1 {{linear resize with coordinates align_corners (nearest floor, scale 2) reads other input positions along the height than oneDNN's resampling, which maps output y to (y + 0.5) * IH / OH - 0.5, not supported by resize_onednn; using resize_any}}
  %b = nn.resize %c mode "linear" coordinates "align_corners" nearest "floor" scales [2.0, 2.0] : tensor<1x20x8x8xf32> -> tensor<1x20x16x16xf32>
  // expected-remark @+1 {{the target asks oneDNN for no channel-blocked activation format, and oneDNN's shuffle is fast on nChw8c and nChw16c only, not supported by channel_shuffle_onednn; using channel_shuffle_reorder_onednn}}
  %h = nn.channel_shuffle %c groups 4 : tensor<1x20x8x8xf32>
  func.return %a, %b, %h : tensor<1x20x16x16xf32>, tensor<1x20x16x16xf32>, tensor<1x20x8x8xf32>
}
// CHECK-LABEL: func.func @movement
// CHECK:      %a = nn.resize {{.*}}"resize_onednn"
// CHECK:      %b = nn.resize {{.*}}"resize_any"
// ISA-AVX512: %h = nn.channel_shuffle %c groups 4 {kernel = #nn.kernel<"channel_shuffle_onednn", operands = ["NCHW16c"], results = ["NCHW16c"]>}
// ISA-AVX2:   %h = nn.channel_shuffle %c groups 4 {kernel = #nn.kernel<"channel_shuffle_reorder_onednn", operands = ["*"], results = ["*"]>} : tensor<1x20x8x8xf32, #layout.layout<"NHWC">>
// REMARK-ISA-AVX512: nn.resize: linear resize with coordinates align_corners
// REMARK-ISA-AVX512-NOT: channel_shuffle
// REMARK-ISA-AVX2: nn.resize: linear resize with coordinates align_corners
// REMARK-ISA-AVX2: movement-onednn.mlir:[[#]]:3: remark: [select-dispatch] nn.channel_shuffle: oneDNN's convolutions run nChw16c fast with its avx512_core code only, which it does not run here: the data around the shuffle would not be nChw16c, not supported by channel_shuffle_onednn; using channel_shuffle_reorder_onednn
// REMARK-ISA-AVX2: nn.channel_shuffle: oneDNN's convolutions run nChw16c fast with its avx512_core code only

// -----

// Slices, concat and shuffle of plain data on a target asking oneDNN for no blocked format:
// a strided window is oneDNN's reorder (slice_onednn), ViT's rank-3 class-token concat
// oneDNN's concat, the shuffle oneDNN's reorder between strided descriptors.
func.func @plain(%x: tensor<1x7x12xf32>, %t: tensor<1x1x12xf32>, %y: tensor<1x8x4x4xf32>) -> (tensor<1x7x4xf32>, tensor<1x8x12xf32>, tensor<1x8x4x4xf32>, tensor<1x7x4xf32>) {
  %q = nn.slice %x starts [0, 0, 4] sizes [1, 7, 4] steps [1, 1, 1] : tensor<1x7x12xf32> -> tensor<1x7x4xf32>
  %c = nn.concat %t, %x axis 1 : (tensor<1x1x12xf32>, tensor<1x7x12xf32>) -> tensor<1x8x12xf32>
  // expected-remark @+1 {{the target asks oneDNN for no channel-blocked activation format, and oneDNN's shuffle is fast on nChw8c and nChw16c only, not supported by channel_shuffle_onednn; using channel_shuffle_reorder_onednn}}
  %s = nn.channel_shuffle %y groups 2 : tensor<1x8x4x4xf32>
  // expected-remark @+2 {{a negative step; oneDNN's strides are positive, not supported by slice_onednn}}
  // expected-remark @+1 {{rank-3 input; the kernel needs N, C, H, W, not supported by slice_any; using slice_ref}}
  %r = nn.slice %x starts [0, 0, 11] sizes [1, 7, 4] steps [1, 1, -3] : tensor<1x7x12xf32> -> tensor<1x7x4xf32>
  func.return %q, %c, %s, %r : tensor<1x7x4xf32>, tensor<1x8x12xf32>, tensor<1x8x4x4xf32>, tensor<1x7x4xf32>
}
// PLAIN-LABEL: func.func @plain
// PLAIN:       %q = nn.slice {{.*}}"slice_onednn", operands = ["*"], results = ["*"]
// PLAIN:       %c = nn.concat {{.*}}"concat_onednn"
// PLAIN:       %s = nn.channel_shuffle {{.*}}"channel_shuffle_reorder_onednn", operands = ["*"], results = ["*"]
// PLAIN:       %r = nn.slice {{.*}}"slice_ref"
