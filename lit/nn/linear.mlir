// Round trip of the convolution and matrix-product ops, in the pretty and the generic form.
// RUN: nnlayout-opt %s | nnlayout-opt | filecheck %s
// RUN: nnlayout-opt %s --print-op-generic > %t
// RUN: filecheck %s --check-prefix=GENERIC < %t
// RUN: nnlayout-opt %t | filecheck %s

func.func @conv2d(%x: tensor<1x3x224x224xf32>, %w: tensor<64x3x7x7xf32>, %b: tensor<64xf32>,
                  %dw: tensor<32x1x3x3xf32>, %y: tensor<2x32x28x28xf32>) -> (tensor<1x64x112x112xf32>, tensor<2x32x24x24xf32>) {
  %0 = nn.conv2d %x, %w, %b strides [2, 2] pads [3, 3, 3, 3] dilations [1, 1] groups 1 : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  %1 = nn.conv2d %y, %dw strides [1, 1] pads [0, 0, 0, 0] dilations [2, 2] groups 32 : (tensor<2x32x28x28xf32>, tensor<32x1x3x3xf32>) -> tensor<2x32x24x24xf32>
  func.return %0, %1 : tensor<1x64x112x112xf32>, tensor<2x32x24x24xf32>
}
// CHECK-LABEL: func.func @conv2d
// CHECK:      %0 = nn.conv2d %x, %w, %b strides [2, 2] pads [3, 3, 3, 3] dilations [1, 1] groups 1 : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
// CHECK-NEXT: %1 = nn.conv2d %y, %dw strides [1, 1] pads [0, 0, 0, 0] dilations [2, 2] groups 32 : (tensor<2x32x28x28xf32>, tensor<32x1x3x3xf32>) -> tensor<2x32x24x24xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "conv2d"
// GENERIC:      %0 = "nn.conv2d"(%x, %w, %b) <{strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>, dilations = array<i64: 1, 1>, groups = 1 : i64}> : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
// GENERIC-NEXT: %1 = "nn.conv2d"(%y, %dw) <{strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 2, 2>, groups = 32 : i64}>

// A convolution with its epilogue (what fuse-post-ops makes): + addend, then an activation.
func.func @fused_conv2d(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x3x3xf32>, %b: tensor<8xf32>, %r: tensor<1x8x16x16xf32>) -> (tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>) {
  %0 = nn.fused_conv2d %x, %w, %b add %r strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "relu" : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>, tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %1 = nn.fused_conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "clip" min 0.0 max 6.0 : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32>
  %2 = nn.fused_conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "leaky_relu" alpha 0.1 : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32>
  func.return %0, %1, %2 : tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>
}
// CHECK-LABEL: func.func @fused_conv2d
// CHECK:      %0 = nn.fused_conv2d %x, %w, %b add %r strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "relu" : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>, tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
// CHECK-NEXT: %1 = nn.fused_conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "clip" min 0.000000e+00 max 6.000000e+00 : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32>
// CHECK-NEXT: %2 = nn.fused_conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "leaky_relu" alpha 1.000000e-01 : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "fused_conv2d"
// GENERIC:      %0 = "nn.fused_conv2d"(%x, %w, %b, %r) <{strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64, activation = "relu"}>
// GENERIC-NEXT: %1 = "nn.fused_conv2d"(%x, %w, %b) <{strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64, activation = "clip", min = 0.000000e+00 : f32, max = 6.000000e+00 : f32}>

func.func @conv_transpose2d(%x: tensor<1x8x16x16xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf32>) -> (tensor<1x8x32x32xf32>, tensor<1x4x18x18xf32>) {
  %0 = nn.conv_transpose2d %x, %w, %b strides [2, 2] pads [1, 1, 1, 1] output_padding [1, 1] dilations [1, 1] groups 2 : (tensor<1x8x16x16xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x32x32xf32>
  %1 = nn.conv_transpose2d %x, %w strides [1, 1] pads [0, 0, 0, 0] output_padding [0, 0] dilations [1, 1] groups 1 : (tensor<1x8x16x16xf32>, tensor<8x4x3x3xf32>) -> tensor<1x4x18x18xf32>
  func.return %0, %1 : tensor<1x8x32x32xf32>, tensor<1x4x18x18xf32>
}
// CHECK-LABEL: func.func @conv_transpose2d
// CHECK:      %0 = nn.conv_transpose2d %x, %w, %b strides [2, 2] pads [1, 1, 1, 1] output_padding [1, 1] dilations [1, 1] groups 2 : (tensor<1x8x16x16xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x32x32xf32>
// CHECK-NEXT: %1 = nn.conv_transpose2d %x, %w strides [1, 1] pads [0, 0, 0, 0] output_padding [0, 0] dilations [1, 1] groups 1 : (tensor<1x8x16x16xf32>, tensor<8x4x3x3xf32>) -> tensor<1x4x18x18xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "conv_transpose2d"
// GENERIC:      %0 = "nn.conv_transpose2d"(%x, %w, %b) <{strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>, dilations = array<i64: 1, 1>, groups = 2 : i64}>
// GENERIC-NEXT: %1 = "nn.conv_transpose2d"(%x, %w) <{

func.func @matmul(%a: tensor<2x1x4x8xf32>, %b: tensor<3x8x5xf32>, %v: tensor<8xf32>) -> (tensor<2x3x4x5xf32>, tensor<3x5xf32>, tensor<2x1x4xf32>) {
  %0 = nn.matmul %a, %b : (tensor<2x1x4x8xf32>, tensor<3x8x5xf32>) -> tensor<2x3x4x5xf32>
  %1 = nn.matmul %v, %b : (tensor<8xf32>, tensor<3x8x5xf32>) -> tensor<3x5xf32>
  %2 = nn.matmul %a, %v : (tensor<2x1x4x8xf32>, tensor<8xf32>) -> tensor<2x1x4xf32>
  func.return %0, %1, %2 : tensor<2x3x4x5xf32>, tensor<3x5xf32>, tensor<2x1x4xf32>
}
// CHECK-LABEL: func.func @matmul
// CHECK:      %0 = nn.matmul %a, %b : (tensor<2x1x4x8xf32>, tensor<3x8x5xf32>) -> tensor<2x3x4x5xf32>
// CHECK-NEXT: %1 = nn.matmul %v, %b : (tensor<8xf32>, tensor<3x8x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT: %2 = nn.matmul %a, %v : (tensor<2x1x4x8xf32>, tensor<8xf32>) -> tensor<2x1x4xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "matmul"
// GENERIC:      %0 = "nn.matmul"(%a, %b) : (tensor<2x1x4x8xf32>, tensor<3x8x5xf32>) -> tensor<2x3x4x5xf32>

func.func @gemm(%x: tensor<4x512xf32>, %w: tensor<1000x512xf32>, %b: tensor<1000xf32>, %at: tensor<512x4xf32>, %c: tensor<4x1xf32>) -> (tensor<4x1000xf32>, tensor<4x1000xf32>, tensor<4x4xf32>) {
  %0 = nn.gemm %x, %w, %b trans_b alpha 1.0 beta 1.0 : (tensor<4x512xf32>, tensor<1000x512xf32>, tensor<1000xf32>) -> tensor<4x1000xf32>
  %1 = nn.gemm %at, %w, %c trans_a trans_b alpha 0.5 beta 2.0 : (tensor<512x4xf32>, tensor<1000x512xf32>, tensor<4x1xf32>) -> tensor<4x1000xf32>
  %2 = nn.gemm %x, %at alpha 1.0 beta 0.0 : (tensor<4x512xf32>, tensor<512x4xf32>) -> tensor<4x4xf32>
  func.return %0, %1, %2 : tensor<4x1000xf32>, tensor<4x1000xf32>, tensor<4x4xf32>
}
// CHECK-LABEL: func.func @gemm
// CHECK:      %0 = nn.gemm %x, %w, %b trans_b alpha 1.000000e+00 beta 1.000000e+00 : (tensor<4x512xf32>, tensor<1000x512xf32>, tensor<1000xf32>) -> tensor<4x1000xf32>
// CHECK-NEXT: %1 = nn.gemm %at, %w, %c trans_a trans_b alpha 5.000000e-01 beta 2.000000e+00 : (tensor<512x4xf32>, tensor<1000x512xf32>, tensor<4x1xf32>) -> tensor<4x1000xf32>
// CHECK-NEXT: %2 = nn.gemm %x, %at alpha 1.000000e+00 beta 0.000000e+00 : (tensor<4x512xf32>, tensor<512x4xf32>) -> tensor<4x4xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "gemm"
// GENERIC:      %0 = "nn.gemm"(%x, %w, %b) <{trans_b, alpha = 1.000000e+00 : f32, beta = 1.000000e+00 : f32}>
// GENERIC:      %1 = "nn.gemm"(%at, %w, %c) <{trans_a, trans_b, alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32}>
