// REQUIRES: onednn
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=onednn-nchw8c},insert-layouts,propagate-layouts' | filecheck %s
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics -p 'select-dispatch{target=onednn-nchw8c},insert-layouts,propagate-layouts{remarks=true}'

// oneDNN's reduction (chosen for a reduction over the trailing axes of plain data) over the
// channels of 20-channel NCHW8c data would read 4 padding lanes (a mean divided by 24, a max
// that a padding zero wins): the layout is not propagated into it, and it reads plain data.
func.func @channels(%x: tensor<1x3x5x5xf32>) -> tensor<1x1x1x1xf32> {
  %w = nn.constant dense<0.1> : tensor<20x3x3x3xf32>
  // expected-remark @+1 {{%c: axis 1 (C) padded from 20 to 24 in NCHW8c}}
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x5x5xf32>, tensor<20x3x3x3xf32>) -> tensor<1x20x5x5xf32>
  // expected-remark @+1 {{layout NCHW8c not propagated: reduce_onednn: it reduces axis 1, which NCHW8c splits into blocks, whose padding lanes it would read}}
  %m = nn.reduce %c kind "max" axes [1, 2, 3] : tensor<1x20x5x5xf32> -> tensor<1x1x1x1xf32>
  func.return %m : tensor<1x1x1x1xf32>
}
// CHECK-LABEL: func.func @channels
// CHECK:      %[[C:.*]] = nn.conv2d {{.*}} -> tensor<1x20x5x5xf32, #layout.layout<"NCHW8c">>
// CHECK-NEXT: %[[PLAIN:.*]] = layout.reorder %[[C]] : tensor<1x20x5x5xf32, #layout.layout<"NCHW8c">> -> tensor<1x20x5x5xf32>
// CHECK-NEXT: nn.reduce %[[PLAIN]] kind "max" axes [1, 2, 3] {{.*}} : tensor<1x20x5x5xf32> -> tensor<1x1x1x1xf32>

// -----

// Over the channels alone oneDNN has no fast code: the blocked family's reduction runs it in
// NCHW8c, its padding lanes set aside, and its one-channel result stays blocked.
func.func @channel_mean(%x: tensor<1x3x5x5xf32>) -> tensor<1x1x5x5xf32> {
  %w = nn.constant dense<0.1> : tensor<20x3x3x3xf32>
  // expected-remark @+1 {{%c: axis 1 (C) padded from 20 to 24 in NCHW8c}}
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x5x5xf32>, tensor<20x3x3x3xf32>) -> tensor<1x20x5x5xf32>
  // expected-remark @+2 {{[select-dispatch] nn.reduce: oneDNN chose ref:any for plain data, not supported by reduce_onednn; using reduce_any}}
  // expected-remark @+1 {{%m: axis 1 (C) padded from 1 to 8 in NCHW8c}}
  %m = nn.reduce %c kind "mean" axes [1] : tensor<1x20x5x5xf32> -> tensor<1x1x5x5xf32>
  func.return %m : tensor<1x1x5x5xf32>
}
// CHECK-LABEL: func.func @channel_mean
// CHECK:      %[[C:.*]] = nn.conv2d {{.*}} -> tensor<1x20x5x5xf32, #layout.layout<"NCHW8c">>
// CHECK-NEXT: %[[M:.*]] = nn.reduce %[[C]] kind "mean" axes [1] {kernel = #nn.kernel<"reduce_any"{{.*}} : tensor<1x20x5x5xf32, #layout.layout<"NCHW8c">> -> tensor<1x1x5x5xf32, #layout.layout<"NCHW8c">>
// CHECK-NEXT: layout.reorder %[[M]] : tensor<1x1x5x5xf32, #layout.layout<"NCHW8c">> -> tensor<1x1x5x5xf32>

// -----

// LRN runs in NHWC (32 channels, a window of 5: oneDNN's avx2 and avx512 code) and layer
// norm plain: one reorder from the convolution's NCHW8c each.
func.func @normalisations(%x: tensor<1x3x5x5xf32>, %s: tensor<5xf32>) -> (tensor<1x32x5x5xf32>, tensor<1x32x5x5xf32>) {
  %w = nn.constant dense<0.1> : tensor<32x3x3x3xf32>
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x5x5xf32>, tensor<32x3x3x3xf32>) -> tensor<1x32x5x5xf32>
  // expected-remark @+1 {{operand 0 reordered from NCHW8c to NHWC: lrn_onednn needs NHWC}}
  %l = nn.lrn %c size 5 alpha 1.0e-4 beta 0.75 bias 1.0 : tensor<1x32x5x5xf32>
  // expected-remark @+1 {{operand 0 reordered from NCHW8c to plain: layer_norm_onednn needs plain}}
  %n = nn.layer_norm %c, %s axis -1 epsilon 1.0e-5 : (tensor<1x32x5x5xf32>, tensor<5xf32>) -> tensor<1x32x5x5xf32>
  func.return %l, %n : tensor<1x32x5x5xf32>, tensor<1x32x5x5xf32>
}
// CHECK-LABEL: func.func @normalisations
// CHECK: nn.lrn {{.*}} : tensor<1x32x5x5xf32, #layout.layout<"NHWC">>
// CHECK: nn.layer_norm {{.*}} : (tensor<1x32x5x5xf32>, tensor<5xf32>) -> tensor<1x32x5x5xf32>
