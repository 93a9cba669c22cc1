// RUN: nnlayout-opt %s --split-input-file -p fold-batch-norm | filecheck %s
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics -p fold-batch-norm
// RUN: nnlayout-opt %s --split-input-file -p 'default-pipeline{target=avx2}' | filecheck %s --check-prefix=PIPE

// conv (with bias) -> batch_norm: one conv whose weight and bias are constant expressions.
func.func @with_bias(%x: tensor<1x8x16x16xf32>) -> tensor<1x16x16x16xf32> {
  %w = nn.constant dense<0.1> : tensor<16x8x3x3xf32>
  %b = nn.constant dense<0.2> : tensor<16xf32>
  %scale = nn.constant dense<1.5> : tensor<16xf32>
  %beta = nn.constant dense<0.3> : tensor<16xf32>
  %mean = nn.constant dense<0.05> : tensor<16xf32>
  %var = nn.constant dense<2.0> : tensor<16xf32>
  %c = nn.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x8x16x16xf32>, tensor<16x8x3x3xf32>, tensor<16xf32>) -> tensor<1x16x16x16xf32>
  %n = nn.batch_norm %c, %scale, %beta, %mean, %var epsilon 1.0e-05 : (tensor<1x16x16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x16x16xf32>
  func.return %n : tensor<1x16x16x16xf32>
}
// CHECK-LABEL: func.func @with_bias
// CHECK:      %[[EPS:.*]] = nn.constant dense<1.000000e-05> : tensor<16xf32>
// CHECK-NEXT: %[[VAR:.*]] = nn.add %var, %[[EPS]] : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
// CHECK-NEXT: %[[STD:.*]] = nn.sqrt %[[VAR]] : tensor<16xf32>
// CHECK-NEXT: %[[S:.*]] = nn.div %scale, %[[STD]]
// CHECK-NEXT: %[[S4:.*]] = nn.reshape %[[S]] : tensor<16xf32> -> tensor<16x1x1x1xf32>
// CHECK-NEXT: %[[W:.*]] = nn.mul %w, %[[S4]] : (tensor<16x8x3x3xf32>, tensor<16x1x1x1xf32>) -> tensor<16x8x3x3xf32>
// CHECK-NEXT: %[[SHIFTED:.*]] = nn.sub %b, %mean
// CHECK-NEXT: %[[SCALED:.*]] = nn.mul %[[SHIFTED]], %[[S]]
// CHECK-NEXT: %[[B:.*]] = nn.add %[[SCALED]], %beta
// CHECK-NEXT: %c = nn.conv2d %x, %[[W]], %[[B]] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1
// CHECK-NEXT: func.return %c
// CHECK-NOT:  nn.batch_norm
// The folding arithmetic runs once, at load: no kernel, not in an nn.compute; the folded
// weight is packed (a reorder of a constant expression, also at load).
// PIPE-LABEL: func.func @with_bias
// PIPE:       %[[W:.*]] = nn.mul %w, %{{.*}} : (tensor<16x8x3x3xf32>, tensor<16x1x1x1xf32>) -> tensor<16x8x3x3xf32>
// PIPE:       %[[WP:.*]] = layout.reorder %[[W]] : tensor<16x8x3x3xf32> -> tensor<16x8x3x3xf32, #layout.layout<"IHW8iO8o">>
// PIPE:       nn.compute ins(%{{.*}}, %[[WP]], %{{.*}} : memref<1x1x18x18x8xf32>, tensor<16x8x3x3xf32, #layout.layout<"IHW8iO8o">>
// PIPE-NEXT:  ^bb0
// PIPE-NEXT:  nn.conv2d {{.*}}conv2d_nchwc
// PIPE-NOT:   nn.batch_norm

// -----

// A depthwise conv without bias gets a zero bias.
func.func @depthwise_without_bias(%x: tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> {
  %w = nn.constant dense<0.1> : tensor<8x1x3x3xf32>
  %p = nn.constant dense<0.5> : tensor<8xf32>
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 8 : (tensor<1x8x16x16xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x16x16xf32>
  %n = nn.batch_norm %c, %p, %p, %p, %p epsilon 1.0e-05 : (tensor<1x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32>
  func.return %n : tensor<1x8x16x16xf32>
}
// CHECK-LABEL: func.func @depthwise_without_bias
// CHECK:      %[[ZERO:.*]] = nn.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK-NEXT: nn.sub %[[ZERO]], %p
// CHECK:      %c = nn.conv2d %x, %{{.*}}, %{{.*}} strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 8 : (tensor<1x8x16x16xf32>, tensor<8x1x3x3xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32>
// CHECK-NOT:  nn.batch_norm
// PIPE-LABEL: func.func @depthwise_without_bias
// PIPE-NOT:   nn.batch_norm

// -----

// Not folded: the batch norm reads a relu; the conv's result is also returned.
func.func @left_alone(%x: tensor<1x8x16x16xf32>) -> (tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>) {
  %w = nn.constant dense<0.1> : tensor<8x8x1x1xf32>
  %p = nn.constant dense<0.5> : tensor<8xf32>
  %r = nn.relu %x : tensor<1x8x16x16xf32>
  %n1 = nn.batch_norm %r, %p, %p, %p, %p epsilon 1.0e-05 : (tensor<1x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32>
  %c = nn.conv2d %n1, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x8x16x16xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x16x16xf32>
  // expected-remark @+1 {{not folded into the convolution: the convolution's result has other uses}}
  %n2 = nn.batch_norm %c, %p, %p, %p, %p epsilon 1.0e-05 : (tensor<1x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32>
  func.return %n2, %c : tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>
}
// CHECK-LABEL: func.func @left_alone
// CHECK:       %n1 = nn.batch_norm %r,
// CHECK-NEXT:  %c = nn.conv2d %n1, %w
// CHECK-NEXT:  %n2 = nn.batch_norm %c,
// PIPE-LABEL:  func.func @left_alone
// PIPE-COUNT-2: nn.batch_norm {{.*}}kernel
