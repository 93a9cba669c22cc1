// RUN: rm -rf %t
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// CHECK: [[FILE]]:7:3: error: the result of nn.conv2d (tensor<1x1x2000001x2000001xf32>) needs 16,000,016,000,004 bytes (14.6 TiB), more than this machine's memory

func.func @f(%x: tensor<1x1x1x1xf32>, %w: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  %0 = nn.conv2d %x, %w strides [1, 1] pads [1000000, 1000000, 1000000, 1000000] dilations [1, 1] groups 1 : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x2000001x2000001xf32>
  func.return %x : tensor<1x1x1x1xf32>
}
