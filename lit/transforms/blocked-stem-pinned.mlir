// blocked-stem keeps a kernel the user pinned: where an op of the stem's chain runs a kernel
// other than the one `host` selects (here the 1x1 to 16 channels, pinned to conv2d_ref), the
// chain is left as select-dispatch chose it, with no remark.
// REQUIRES: onednn
// RUN: nnlayout-opt %s -p 'select-dispatch,fuse-post-ops,blocked-stem{remarks=true}' 2>&1 | filecheck %s

// CHECK-NOT: remark
// CHECK-NOT: NCHW16c
// CHECK:     nn.conv2d {{.*}}#nn.kernel<"conv2d_ref"
// CHECK-NOT: NCHW16c
func.func @head(%x: tensor<1x3x32x32xf32>, %ws: tensor<32x3x3x3xf32>, %bs: tensor<32xf32>, %wd: tensor<32x1x3x3xf32>, %bd: tensor<32xf32>, %wp: tensor<16x32x1x1xf32>, %bp: tensor<16xf32>, %we: tensor<48x16x1x1xf32>) -> tensor<1x48x16x16xf32> {
  %s = nn.conv2d %x, %ws, %bs strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x32x32xf32>, tensor<32x3x3x3xf32>, tensor<32xf32>) -> tensor<1x32x16x16xf32>
  %sr = nn.relu %s : tensor<1x32x16x16xf32>
  %d = nn.conv2d %sr, %wd, %bd strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 32 : (tensor<1x32x16x16xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>) -> tensor<1x32x16x16xf32>
  %dr = nn.relu %d : tensor<1x32x16x16xf32>
  %p = nn.conv2d %dr, %wp, %bp strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {kernel = #nn.kernel<"conv2d_ref", operands = ["", "", ""], results = [""]>} : (tensor<1x32x16x16xf32>, tensor<16x32x1x1xf32>, tensor<16xf32>) -> tensor<1x16x16x16xf32>
  %e = nn.conv2d %p, %we strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x16x16x16xf32>, tensor<48x16x1x1xf32>) -> tensor<1x48x16x16xf32>
  %er = nn.relu %e : tensor<1x48x16x16xf32>
  func.return %er : tensor<1x48x16x16xf32>
}
