// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=avx2},insert-layouts,propagate-layouts,fold-constants' | filecheck %s
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics -p 'select-dispatch{target=avx2},insert-layouts,propagate-layouts'

// conv -> relu -> add(residual) -> max_pool -> conv -> global pool: one reorder in, one out.
func.func @residual(%x: tensor<1x16x16x16xf32>) -> tensor<1x16x1x1xf32> {
  %w1 = nn.constant dense<0.1> : tensor<16x16x3x3xf32>
  // expected-remark @+1 {{operand 0 reordered from plain to NCHW8c: conv2d_nchwc needs NCHW8c}}
  %c1 = nn.conv2d %x, %w1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x16x16xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x16x16xf32>
  %r1 = nn.relu %c1 : tensor<1x16x16x16xf32>
  %w2 = nn.constant dense<0.1> : tensor<16x16x3x3xf32>
  %c2 = nn.conv2d %r1, %w2 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x16x16xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x16x16xf32>
  %a = nn.add %c2, %r1 : (tensor<1x16x16x16xf32>, tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  %p = nn.max_pool2d %a kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x16x16x16xf32> -> tensor<1x16x8x8xf32>
  %w3 = nn.constant dense<0.1> : tensor<16x16x3x3xf32>
  %c3 = nn.conv2d %p, %w3 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %g = nn.global_avg_pool %c3 : tensor<1x16x8x8xf32> -> tensor<1x16x1x1xf32>
  func.return %g : tensor<1x16x1x1xf32>
}
// CHECK-LABEL: func.func @residual
// CHECK-COUNT-1: layout.reorder %x
// CHECK:     nn.relu {{.*}} : tensor<1x16x16x16xf32, #layout.layout<"NCHW8c">>
// CHECK:     nn.add {{.*}} -> tensor<1x16x16x16xf32, #layout.layout<"NCHW8c">>
// CHECK:     nn.max_pool2d {{.*}} -> tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>
// CHECK:     nn.global_avg_pool {{.*}} -> tensor<1x16x1x1xf32, #layout.layout<"NCHW8c">>
// CHECK-NEXT: %[[OUT:.*]] = layout.reorder %{{.*}} : tensor<1x16x1x1xf32, #layout.layout<"NCHW8c">> -> tensor<1x16x1x1xf32>
// CHECK-NEXT: func.return %[[OUT]]
// CHECK-NOT: layout.reorder

// -----

// Concat of 8+8 channels stays blocked; softmax over channels needs plain data. %x, read by
// two blocked convolutions, is reordered once (MergeSiblingReorders).
func.func @concat_softmax(%x: tensor<1x8x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %w1 = nn.constant dense<0.1> : tensor<8x8x3x3xf32>
  // expected-remark @+1 {{operand 0 reordered from plain to NCHW8c: conv2d_nchwc needs NCHW8c}}
  %c1 = nn.conv2d %x, %w1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  %w2 = nn.constant dense<0.2> : tensor<8x8x3x3xf32>
  // expected-remark @+1 {{operand 0 reordered from plain to NCHW8c: conv2d_nchwc needs NCHW8c}}
  %c2 = nn.conv2d %x, %w2 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  %cat = nn.concat %c1, %c2 axis 1 : (tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) -> tensor<1x16x8x8xf32>
  // expected-remark @+1 {{operand 0 reordered from NCHW8c to plain: softmax_ref needs plain}}
  %s = nn.softmax %cat axis 1 : tensor<1x16x8x8xf32>
  func.return %s : tensor<1x16x8x8xf32>
}
// CHECK-LABEL: func.func @concat_softmax
// CHECK:      %[[XB:.*]] = layout.reorder %x
// CHECK-NOT:  layout.reorder %x
// CHECK:      nn.conv2d %[[XB]],
// CHECK-NOT:  layout.reorder %x
// CHECK:      nn.conv2d %[[XB]],
// CHECK:      nn.concat {{.*}} -> tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>
// CHECK-NEXT: layout.reorder {{.*}} -> tensor<1x16x8x8xf32>
// CHECK-NEXT: nn.softmax
