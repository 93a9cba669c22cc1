// RUN: nnlayout-opt %s -p 'select-dispatch{target=avx512},insert-layouts' | filecheck %s
// RUN: nnlayout-opt %s -p 'select-dispatch{target=avx512},insert-layouts,fold-constants' | filecheck %s --check-prefix=FOLD

// The C=3 stem reads the image plain (padding it to 16 lanes would multiply its work by 5.3):
// weights packed IHWO16o (the GEMM's matrix, O padded to 32), bias C16c; the blocked result
// is reordered back for its plain user.
func.func @stem(%x: tensor<1x3x32x32xf32>) -> tensor<1x20x32x32xf32> {
  %w = nn.constant dense<0.5> : tensor<20x3x3x3xf32>
  %b = nn.constant dense<0.25> : tensor<20xf32>
  %y = nn.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x32x32xf32>, tensor<20x3x3x3xf32>, tensor<20xf32>) -> tensor<1x20x32x32xf32>
  func.return %y : tensor<1x20x32x32xf32>
}
// CHECK-LABEL: func.func @stem
// CHECK-NOT:  layout.reorder %x
// CHECK:      %[[W:.*]] = layout.reorder %w : tensor<20x3x3x3xf32> -> tensor<20x3x3x3xf32, #layout.layout<"IHWO16o">>
// CHECK:      %[[B:.*]] = layout.reorder %b : tensor<20xf32> -> tensor<20xf32, #layout.layout<"C16c">>
// CHECK:      %[[Y:.*]] = nn.conv2d %x, %[[W]], %[[B]] {{.*}} -> tensor<1x20x32x32xf32, #layout.layout<"NCHW16c">>
// CHECK-NEXT: %[[P:.*]] = layout.reorder %[[Y]] : tensor<1x20x32x32xf32, #layout.layout<"NCHW16c">> -> tensor<1x20x32x32xf32>
// CHECK-NEXT: func.return %[[P]]

// Weights are packed at compile time: no reorder of a constant remains.
// FOLD-LABEL: func.func @stem
// FOLD:     nn.constant dense<5.000000e-01> : tensor<20x3x3x3xf32> -> tensor<20x3x3x3xf32, #layout.layout<"IHWO16o">>
// FOLD:     nn.constant dense<2.500000e-01> : tensor<20xf32> -> tensor<20xf32, #layout.layout<"C16c">>
// FOLD-NOT: layout.reorder %w
// FOLD-NOT: layout.reorder %b

// 12 channels: padded into one 16-lane block; the weights IHW16iO16o, padded on I and O.
func.func @padded(%x: tensor<1x12x32x32xf32>) -> tensor<1x20x32x32xf32> {
  %w = nn.constant dense<0.5> : tensor<20x12x3x3xf32>
  %y = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x12x32x32xf32>, tensor<20x12x3x3xf32>) -> tensor<1x20x32x32xf32>
  func.return %y : tensor<1x20x32x32xf32>
}
// CHECK-LABEL: func.func @padded
// CHECK:      %[[X:.*]] = layout.reorder %x : tensor<1x12x32x32xf32> -> tensor<1x12x32x32xf32, #layout.layout<"NCHW16c">>
// CHECK:      %[[W:.*]] = layout.reorder %w : tensor<20x12x3x3xf32> -> tensor<20x12x3x3xf32, #layout.layout<"IHW16iO16o">>
// CHECK:      %[[Y:.*]] = nn.conv2d %[[X]], %[[W]] {{.*}} -> tensor<1x20x32x32xf32, #layout.layout<"NCHW16c">>
// CHECK-NEXT: %[[P:.*]] = layout.reorder %[[Y]] : tensor<1x20x32x32xf32, #layout.layout<"NCHW16c">> -> tensor<1x20x32x32xf32>
// FOLD-LABEL: func.func @padded
// FOLD:     layout.reorder %x
// FOLD:     nn.constant dense<5.000000e-01> : tensor<20x12x3x3xf32> -> tensor<20x12x3x3xf32, #layout.layout<"IHW16iO16o">>
// FOLD-NOT: layout.reorder %w

// A `"*"` kernel computes in the layout operand 0 has: an operand typed in another layout
// (by hand, here NHWC beside NCHW8c) is reordered into operand 0's.
func.func @star_operands_follow_operand_0(%x: tensor<1x12x4x4xf32, #layout.layout<"NCHW8c">>, %z: tensor<1x12x4x4xf32, #layout.layout<"NHWC">>) -> tensor<1x12x4x4xf32, #layout.layout<"NCHW8c">> {
  %s = nn.add %x, %z : (tensor<1x12x4x4xf32, #layout.layout<"NCHW8c">>, tensor<1x12x4x4xf32, #layout.layout<"NHWC">>) -> tensor<1x12x4x4xf32, #layout.layout<"NCHW8c">>
  func.return %s : tensor<1x12x4x4xf32, #layout.layout<"NCHW8c">>
}
// CHECK-LABEL: func.func @star_operands_follow_operand_0
// CHECK:      %[[Z:.*]] = layout.reorder %z : tensor<1x12x4x4xf32, #layout.layout<"NHWC">> -> tensor<1x12x4x4xf32, #layout.layout<"NCHW8c">>
// CHECK-NEXT: %s = nn.add %x, %[[Z]] {kernel = #nn.kernel<"add_any", operands = ["*", "*"], results = ["*"], in_place = 0>} : (tensor<1x12x4x4xf32, #layout.layout<"NCHW8c">>, tensor<1x12x4x4xf32, #layout.layout<"NCHW8c">>) -> tensor<1x12x4x4xf32, #layout.layout<"NCHW8c">>
// CHECK-NEXT: func.return %s
