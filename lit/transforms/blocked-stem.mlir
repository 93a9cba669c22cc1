// blocked-stem on `host` (transforms/blocked_stem.py): MobileNetV2's first layers (a 3x3
// stride-2 stem from the 3-channel image, a depthwise 3x3, a 1x1 to 16 channels) run in
// nChw16c where oneDNN runs its avx512_core code: the stem reads the plain input, and the
// 16-channel result, whose nChw16c bytes are NHWC's, reaches the NHWC 1x1 after it as a view.
// On AVX2 (ONEDNN_MAX_CPU_ISA=AVX2) nothing changes; on a target other than host neither.
// REQUIRES: onednn
// RUN: nnlayout-opt %s -p 'select-dispatch,fuse-post-ops,blocked-stem{remarks=true}' 2>&1 | filecheck %s --check-prefixes=%onednn_isa
// RUN: nnlayout-opt %s -p 'default-pipeline' | filecheck %s --check-prefixes=PLANNED-%onednn_isa
// RUN: nnlayout-opt %s -p 'default-pipeline{activation-format=nhwc}' | filecheck %s --check-prefix=NHWC
// RUN: nnlayout-opt %s -p 'select-dispatch{target=onednn},blocked-stem{remarks=true}' 2>&1 | filecheck %s --check-prefix=ONEDNN

// ISA-AVX512:      blocked-stem.mlir:[[# @LINE + 17]]:3: remark: [blocked-stem] nn.fused_conv2d: 3 convolutions from the input to 16 channels run in nChw16c (onednn-nchw16c): nChw16c is NHWC at 16 channels
// ISA-AVX512:      nn.fused_conv2d %x, {{.*}}operands = ["", "OHWI16o", ""], results = ["NCHW16c"]
// ISA-AVX512-NEXT: nn.fused_conv2d %{{.*}}results = ["NCHW16c"]
// ISA-AVX512-NEXT: nn.conv2d %{{.*}}operands = ["NCHW16c", {{.*}}results = ["NCHW16c"]
// ISA-AVX512:      nn.fused_conv2d %{{.*}}operands = ["NHWC", {{.*}}results = ["NHWC"]
// ISA-AVX2-NOT:    remark
// ISA-AVX2-NOT:    NCHW16c
// PLANNED-ISA-AVX512:     nn.compute ins(%x, {{.*}}) outs(%{{.*}} : memref<1x2x16x16x16xf32>)
// PLANNED-ISA-AVX512:     memref.reinterpret_cast {{.*}} : memref<1x1x16x16x16xf32> to memref<1x16x16x16xf32>
// PLANNED-ISA-AVX512-NOT: layout.reorder {{.*}}NCHW16c
// PLANNED-ISA-AVX2:       layout.reorder %{{.*}} : tensor<1x3x32x32xf32> -> tensor<1x3x32x32xf32, #layout.layout<"NHWC">>
// PLANNED-ISA-AVX2-NOT:   NCHW16c
// NHWC:            layout.reorder %{{.*}} : tensor<1x3x32x32xf32> -> tensor<1x3x32x32xf32, #layout.layout<"NHWC">>
// NHWC-NOT:        NCHW16c
// ONEDNN-NOT:      remark
// ONEDNN-NOT:      blocked-stem
func.func @head(%x: tensor<1x3x32x32xf32>, %ws: tensor<32x3x3x3xf32>, %bs: tensor<32xf32>, %wd: tensor<32x1x3x3xf32>, %bd: tensor<32xf32>, %wp: tensor<16x32x1x1xf32>, %bp: tensor<16xf32>, %we: tensor<48x16x1x1xf32>) -> tensor<1x48x16x16xf32> {
  %s = nn.conv2d %x, %ws, %bs strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x32x32xf32>, tensor<32x3x3x3xf32>, tensor<32xf32>) -> tensor<1x32x16x16xf32>
  %sr = nn.relu %s : tensor<1x32x16x16xf32>
  %d = nn.conv2d %sr, %wd, %bd strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 32 : (tensor<1x32x16x16xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>) -> tensor<1x32x16x16xf32>
  %dr = nn.relu %d : tensor<1x32x16x16xf32>
  %p = nn.conv2d %dr, %wp, %bp strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x32x16x16xf32>, tensor<16x32x1x1xf32>, tensor<16xf32>) -> tensor<1x16x16x16xf32>
  %e = nn.conv2d %p, %we strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x16x16x16xf32>, tensor<48x16x1x1xf32>) -> tensor<1x48x16x16xf32>
  %er = nn.relu %e : tensor<1x48x16x16xf32>
  func.return %er : tensor<1x48x16x16xf32>
}
