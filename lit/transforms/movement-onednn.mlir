// oneDNN's resampling takes the resizes whose taps are its own (half_pixel linear); others
// stay with numpy kernels, saying why; its shuffle runs on the target's nChw16c where oneDNN
// runs its avx512_core code (else the convolutions' data is not nChw16c: the blocked
// family's shuffle runs in their layout).
// REQUIRES: onednn
// RUN: nnlayout-opt %s -p 'select-dispatch{target=onednn-nchw16c},insert-layouts,propagate-layouts' | filecheck %s --check-prefixes=CHECK,%onednn_isa
// RUN: nnlayout-opt %s --verify-diagnostics -p 'select-dispatch{target=onednn-nchw16c}'

func.func @movement(%x: tensor<1x20x8x8xf32>) -> (tensor<1x20x16x16xf32>, tensor<1x20x16x16xf32>, tensor<1x20x8x8xf32>) {
  %w = nn.constant dense<0.1> : tensor<20x20x3x3xf32>
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x20x8x8xf32>, tensor<20x20x3x3xf32>) -> tensor<1x20x8x8xf32>
  %a = nn.resize %c mode "linear" coordinates "half_pixel" nearest "floor" scales [2.0, 2.0] : tensor<1x20x8x8xf32> -> tensor<1x20x16x16xf32>
  // expected-remark @+1 {{linear resize with coordinates align_corners (nearest floor, scale 2) reads other input positions along the height than oneDNN's resampling, which maps output y to (y + 0.5) * IH / OH - 0.5, not supported by resize_onednn; using resize_any}}
  %b = nn.resize %c mode "linear" coordinates "align_corners" nearest "floor" scales [2.0, 2.0] : tensor<1x20x8x8xf32> -> tensor<1x20x16x16xf32>
  %h = nn.channel_shuffle %c groups 4 : tensor<1x20x8x8xf32>
  func.return %a, %b, %h : tensor<1x20x16x16xf32>, tensor<1x20x16x16xf32>, tensor<1x20x8x8xf32>
}
// CHECK-LABEL: func.func @movement
// CHECK:      %a = nn.resize {{.*}}"resize_onednn"
// CHECK:      %b = nn.resize {{.*}}"resize_any"
// ISA-AVX512: %h = nn.channel_shuffle %c groups 4 {kernel = #nn.kernel<"channel_shuffle_onednn", operands = ["NCHW16c"], results = ["NCHW16c"]>}
// ISA-AVX2:   %h = nn.channel_shuffle %c groups 4 {kernel = #nn.kernel<"channel_shuffle_any", operands = ["*"], results = ["*"]>} : tensor<1x20x8x8xf32, #layout.layout<"NHWC">>
