// Per-channel constants [C, 1, 1] (BatchNorm written as Mul and Add, a PRelu slope) after
// extend-ranks: the binary ops run in the convolutions' blocked layout, so no activation is
// reordered between the two convolutions; each constant is reshaped and packed into NCHW8c
// (a constant expression: once, at load). 20 channels: the last block of 8 is half padding.
// With oneDNN, they are its binary and prelu primitives. The results are the same.
// RUN: nnlayout-opt %s -p 'extend-ranks,select-dispatch{target=avx2},insert-layouts,propagate-layouts,fold-constants' | filecheck %s
// RUN: nnlayout-run %s --random-inputs 0 --output-dir %t.before > %t.txt
// RUN: nnlayout-run %s -p 'default-pipeline{target=avx2}' --random-inputs 0 --output-dir %t.after >> %t.txt
// RUN: filecheck %s --check-prefix=SAME < %t.txt

// SAME:      result0: [1, 20, 8, 8] float32 sum=[[SUM:-?[0-9]+]].{{[0-9]+}} crc32=
// SAME-NEXT: result0: [1, 20, 8, 8] float32 sum=[[SUM]].{{[0-9]+}} crc32=

// CHECK-LABEL: func.func @affine
// CHECK:      %s_1 = nn.reshape %s : tensor<20x1x1xf32> -> tensor<1x20x1x1xf32>
// CHECK:      %c = nn.conv2d {{.*}}conv2d_nchwc
// CHECK-NEXT: %s_2 = layout.reorder %s_1 : tensor<1x20x1x1xf32> -> tensor<1x20x1x1xf32, #layout.layout<"NCHW8c">>
// CHECK-NEXT: %m = nn.mul %c, %s_2 {kernel = #nn.kernel<"mul_any", {{.*}}} : (tensor<1x20x8x8xf32, #layout.layout<"NCHW8c">>, tensor<1x20x1x1xf32, #layout.layout<"NCHW8c">>) -> tensor<1x20x8x8xf32, #layout.layout<"NCHW8c">>
// CHECK-NEXT: %t_2 = layout.reorder %t_1
// CHECK-NEXT: %a = nn.add %m, %t_2 {kernel = #nn.kernel<"add_any"{{.*}} -> tensor<1x20x8x8xf32, #layout.layout<"NCHW8c">>
// CHECK-NEXT: %p = nn.prelu %a, %t_2 {kernel = #nn.kernel<"prelu_any"{{.*}} -> tensor<1x20x8x8xf32, #layout.layout<"NCHW8c">>
// CHECK-NEXT: %y = nn.conv2d %p
// CHECK-NEXT: %y_1 = layout.reorder %y
// CHECK-NEXT: func.return %y_1
func.func @affine(%x: tensor<1x20x8x8xf32>, %w: tensor<20x20x3x3xf32>) -> tensor<1x20x8x8xf32> {
  %s = nn.constant dense<1.5> : tensor<20x1x1xf32>
  %t = nn.constant dense<-0.5> : tensor<20x1x1xf32>
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x20x8x8xf32>, tensor<20x20x3x3xf32>) -> tensor<1x20x8x8xf32>
  %m = nn.mul %c, %s : (tensor<1x20x8x8xf32>, tensor<20x1x1xf32>) -> tensor<1x20x8x8xf32>
  %a = nn.add %m, %t : (tensor<1x20x8x8xf32>, tensor<20x1x1xf32>) -> tensor<1x20x8x8xf32>
  %p = nn.prelu %a, %t : (tensor<1x20x8x8xf32>, tensor<20x1x1xf32>) -> tensor<1x20x8x8xf32>
  %y = nn.conv2d %p, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x20x8x8xf32>, tensor<20x20x3x3xf32>) -> tensor<1x20x8x8xf32>
  func.return %y : tensor<1x20x8x8xf32>
}
