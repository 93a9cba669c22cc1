// blocked-stem on `host` (transforms/blocked_stem.py, split_stem_chain): a ResNet's 7x7 stem,
// which split-image-conv makes one convolution per image channel accumulating into the last
// (oneDNN sum post-ops), and the 3x3 stride-2 max pool after it run in nChw16c, where
// oneDNN's per-channel convolutions accumulate faster than into NHWC; the pooled result,
// a quarter of the sum, is reordered to NHWC for the rest. On AVX2
// (ONEDNN_MAX_CPU_ISA=AVX2) nothing changes.
// REQUIRES: onednn
// RUN: nnlayout-opt %s -p 'default-pipeline{remarks=true}' -o /dev/null 2>&1 | filecheck %s --check-prefixes=REMARK-%onednn_isa
// RUN: nnlayout-opt %s -p 'default-pipeline' | filecheck %s --check-prefixes=%onednn_isa
// RUN: nnlayout-opt %s -p 'default-pipeline{activation-format=nhwc}' | filecheck %s --check-prefix=NHWC

// REMARK-ISA-AVX512: blocked-split-stem.mlir:[[# @LINE + 13]]:3: remark: [blocked-stem] nn.conv2d: 3 convolutions summed over the image's channels run in nChw16c (onednn-nchw16c), and the pooling after them: NHWC is reached pooled
// REMARK-ISA-AVX2-NOT: [blocked-stem]
// ISA-AVX512:      nn.conv2d {{.*}}results = ["NCHW16c"]
// ISA-AVX512:      nn.fused_conv2d {{.*}}"fused_conv2d_sum_onednn", {{.*}}results = ["NCHW16c"]
// ISA-AVX512:      nn.fused_conv2d {{.*}}"fused_conv2d_sum_onednn", {{.*}}results = ["NCHW16c"]
// ISA-AVX512:      nn.max_pool2d {{.*}} -> tensor<1x32x8x8xf32, #layout.layout<"NCHW16c">>
// ISA-AVX512:      layout.reorder {{.*}} : tensor<1x32x8x8xf32, #layout.layout<"NCHW16c">> -> tensor<1x32x8x8xf32, #layout.layout<"NHWC">>
// ISA-AVX2-NOT:    NCHW16c
// NHWC-NOT:        NCHW16c

func.func @head(%x: tensor<1x3x32x32xf32>) -> tensor<1x32x8x8xf32> {
  %ws = nn.constant dense<0.1> : tensor<32x3x7x7xf32>
  %bs = nn.constant dense<0.2> : tensor<32xf32>
  %s = nn.conv2d %x, %ws, %bs strides [2, 2] pads [3, 3, 3, 3] dilations [1, 1] groups 1 : (tensor<1x3x32x32xf32>, tensor<32x3x7x7xf32>, tensor<32xf32>) -> tensor<1x32x16x16xf32>
  %r = nn.relu %s : tensor<1x32x16x16xf32>
  %p = nn.max_pool2d %r kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x32x16x16xf32> -> tensor<1x32x8x8xf32>
  %wn = nn.constant dense<0.05> : tensor<32x32x3x3xf32>
  %n = nn.conv2d %p, %wn strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x32x8x8xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x8x8xf32>
  func.return %n : tensor<1x32x8x8xf32>
}
