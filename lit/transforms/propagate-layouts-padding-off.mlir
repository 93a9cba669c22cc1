// With padding off, propagate-layouts does not sink a blocked layout into an op whose values
// it would pad: a DenseNet layer's concatenation of the 20-channel input with a convolution's
// 8 channels stays plain on avx2 (the relu after the convolution still runs in NCHW8c), and
// so does the per-channel scale after it. With padding on both run in NCHW8c.
// RUN: nnlayout-opt %s -p 'extend-ranks,select-dispatch{target=avx2 padding=false},insert-layouts,propagate-layouts' | filecheck %s
// RUN: nnlayout-opt %s --verify-diagnostics -p 'extend-ranks,select-dispatch{target=avx2 padding=false},insert-layouts,propagate-layouts'
// RUN: nnlayout-opt %s -p 'extend-ranks,select-dispatch{target=avx2 padding=true},insert-layouts,propagate-layouts' | filecheck %s --check-prefix=PAD

func.func @dense_layer(%x: tensor<1x20x6x6xf32>, %y: tensor<1x16x6x6xf32>) -> tensor<1x28x6x6xf32> {
  %w = nn.constant dense<0.1> : tensor<8x16x3x3xf32>
  // expected-remark @+1 {{operand 0 reordered from plain to NCHW8c: conv2d_nchwc needs NCHW8c}}
  %c = nn.conv2d %y, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x6x6xf32>, tensor<8x16x3x3xf32>) -> tensor<1x8x6x6xf32>
  %r = nn.relu %c : tensor<1x8x6x6xf32>
  // expected-remark @+2 {{[select-dispatch] nn.concat: input 0 has 20 channels, not a multiple of the block 8, not supported by concat_nchwc; using concat_any}}
  // expected-remark @+1 {{[propagate-layouts] nn.concat: layout NCHW8c not propagated: padding is off, and operand 0 [1, 20, 6, 6] in 'NCHW8c' would be padded to whole blocks}}
  %j = nn.concat %x, %r axis 1 : (tensor<1x20x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x28x6x6xf32>
  %s = nn.constant dense<1.5> : tensor<28x1x1xf32>
  %m = nn.mul %j, %s : (tensor<1x28x6x6xf32>, tensor<28x1x1xf32>) -> tensor<1x28x6x6xf32>
  func.return %m : tensor<1x28x6x6xf32>
}
// CHECK-LABEL: func.func @dense_layer
// CHECK:      %r = nn.relu %c {{.*}} : tensor<1x8x6x6xf32, #layout.layout<"NCHW8c">>
// CHECK-NEXT: %r_1 = layout.reorder %r : tensor<1x8x6x6xf32, #layout.layout<"NCHW8c">> -> tensor<1x8x6x6xf32>
// CHECK-NEXT: %j = nn.concat %x, %r_1 {{.*}} -> tensor<1x28x6x6xf32>
// CHECK:      %m = nn.mul %j, {{.*}} -> tensor<1x28x6x6xf32>
// CHECK-NEXT: func.return %m

// PAD-LABEL: func.func @dense_layer
// PAD:       %j = nn.concat {{.*}} -> tensor<1x28x6x6xf32, #layout.layout<"NCHW8c">>
// PAD:       %m = nn.mul %j, {{.*}} -> tensor<1x28x6x6xf32, #layout.layout<"NCHW8c">>
