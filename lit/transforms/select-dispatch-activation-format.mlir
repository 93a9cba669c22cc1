// select-dispatch{activation-format=auto} (the default) on `host`: a module whose channel
// concat joins convolution outputs (squeezenet's fire module, as both exporters write it) and
// whose convolutions are neither depthwise nor non-square runs its activations in nChw16c
// (onednn-nchw16c) where oneDNN runs its avx512_core code, with a remark at the concat; on
// AVX2 (ONEDNN_MAX_CPU_ISA=AVX2) it stays NHWC. activation-format=nhwc or nchw16c forces
// either; other targets are taken as given. (transforms/activation_format.py)
// REQUIRES: onednn
// RUN: nnlayout-opt %s -p 'select-dispatch{remarks=true}' 2>&1 | filecheck %s --check-prefixes=%onednn_isa,KERNELS-%onednn_isa
// RUN: nnlayout-opt %s -p 'default-pipeline{remarks=true}' 2>&1 | filecheck %s --check-prefixes=%onednn_isa
// RUN: nnlayout-opt %s -p 'select-dispatch{activation-format=nhwc remarks=true}' 2>&1 | filecheck %s --check-prefix=NHWC
// RUN: nnlayout-opt %s -p 'select-dispatch{target=onednn remarks=true}' 2>&1 | filecheck %s --check-prefix=ONEDNN
// RUN: not nnlayout-opt %s -p 'select-dispatch{activation-format=nchw8c}' 2>&1 | filecheck %s --check-prefix=BAD

// ISA-AVX512:     select-dispatch-activation-format.mlir:[[# @LINE + 18]]:3: remark: [select-dispatch] nn.concat: activation format nChw16c for target host (onednn-nchw16c): a channel concat of convolution outputs goes in place, and no op of the module runs slower blocked
// ISA-AVX512:     builtin.module attributes {nnlayout.target = "onednn-nchw16c", nnlayout.padding = true}
// KERNELS-ISA-AVX512: nn.conv2d {{.*}}results = ["NCHW16c"]
// ISA-AVX2-NOT:   activation format
// ISA-AVX2:       builtin.module attributes {nnlayout.target = "host", nnlayout.padding = true}
// NHWC-NOT:       activation format
// NHWC:           builtin.module attributes {nnlayout.target = "host", nnlayout.padding = true}
// NHWC-NOT:       NCHW16c
// ONEDNN-NOT:     activation format
// ONEDNN:         builtin.module attributes {nnlayout.target = "onednn", nnlayout.padding = true}
// BAD:            error: {{.*}}activation-format=nchw8c: expected one of auto, nhwc, nchw16c
func.func @fire(%x: tensor<1x32x16x16xf32>, %ws: tensor<16x32x1x1xf32>, %w1: tensor<32x16x1x1xf32>, %w3: tensor<32x16x3x3xf32>) -> tensor<1x64x16x16xf32> {
  %s = nn.conv2d %x, %ws strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x32x16x16xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x16x16xf32>
  %sr = nn.relu %s : tensor<1x16x16x16xf32>
  %e1 = nn.conv2d %sr, %w1 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x16x16x16xf32>, tensor<32x16x1x1xf32>) -> tensor<1x32x16x16xf32>
  %r1 = nn.relu %e1 : tensor<1x32x16x16xf32>
  %e3 = nn.conv2d %sr, %w3 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x16x16xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x16x16xf32>
  %r3 = nn.relu %e3 : tensor<1x32x16x16xf32>
  %c = nn.concat %r1, %r3 axis 1 : (tensor<1x32x16x16xf32>, tensor<1x32x16x16xf32>) -> tensor<1x64x16x16xf32>
  func.return %c : tensor<1x64x16x16xf32>
}
