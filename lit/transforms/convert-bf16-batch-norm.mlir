// REQUIRES: onednn
// convert-to-bf16 on oneDNN with a DenseNet layer: batch norm -> relu -> 1x1 convolution.
// Where the CPU has AVX512_BF16 (BF16) the batch norm converts (oneDNN's batch norm takes bf16
// data; its kernel widens the bf16 vectors to its f32 ones), so fuse-post-ops still turns the
// batch norm and relu into one bf16 depthwise convolution, its weight and bias folded in f32
// from the widened vectors and rounded to bf16 once: no casts around the batch norm (issue 27:
// DenseNet-121 ran slower in bf16 than in f32 with them). Elsewhere (NO-BF16) nothing converts.
// RUN: nnlayout-opt %s -p 'convert-to-bf16{target=onednn remarks=true},select-dispatch{target=onednn},fuse-post-ops' 2>%t.err | filecheck %s --check-prefix=%onednn_bf16
// RUN: filecheck %s --check-prefix=%onednn_bf16-REMARK --allow-empty < %t.err

func.func @dense_layer(%x: tensor<1x24x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %g = nn.constant dense<1.5> : tensor<24xf32>
  %b = nn.constant dense<-0.25> : tensor<24xf32>
  %m = nn.constant dense<0.125> : tensor<24xf32>
  %v = nn.constant dense<2.0> : tensor<24xf32>
  %n = nn.batch_norm %x, %g, %b, %m, %v epsilon 1.0e-05 : (tensor<1x24x8x8xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>) -> tensor<1x24x8x8xf32>
  %r = nn.relu %n : tensor<1x24x8x8xf32>
  %w = nn.constant dense<0.125> : tensor<16x24x1x1xf32>
  %c = nn.conv2d %r, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x24x8x8xf32>, tensor<16x24x1x1xf32>) -> tensor<1x16x8x8xf32>
  func.return %c : tensor<1x16x8x8xf32>
}
// BF16-LABEL: func.func @dense_layer(%x: tensor<1x24x8x8xf32>) -> tensor<1x16x8x8xf32>
// BF16:       %[[X:.*]] = nn.cast %x {kernel = #nn.kernel<"cast_onednn"{{.*}} : tensor<1x24x8x8xf32> -> tensor<1x24x8x8xbf16>
// BF16-DAG:   %[[G:.*]] = nn.cast %g : tensor<24xf32> -> tensor<24xbf16>
// BF16-DAG:   %[[B:.*]] = nn.cast %b : tensor<24xf32> -> tensor<24xbf16>
// BF16-DAG:   %[[M:.*]] = nn.cast %m : tensor<24xf32> -> tensor<24xbf16>
// BF16-DAG:   %[[V:.*]] = nn.cast %v : tensor<24xf32> -> tensor<24xbf16>
// BF16:       %[[G32:.*]] = nn.cast %[[G]] : tensor<24xbf16> -> tensor<24xf32>
// BF16-NEXT:  %[[B32:.*]] = nn.cast %[[B]] : tensor<24xbf16> -> tensor<24xf32>
// BF16-NEXT:  %[[M32:.*]] = nn.cast %[[M]] : tensor<24xbf16> -> tensor<24xf32>
// BF16-NEXT:  %[[V32:.*]] = nn.cast %[[V]] : tensor<24xbf16> -> tensor<24xf32>
// BF16:       %[[VE:.*]] = nn.add %[[V32]], %{{.*}} : (tensor<24xf32>, tensor<24xf32>) -> tensor<24xf32>
// BF16-NEXT:  %[[SD:.*]] = nn.sqrt %[[VE]] : tensor<24xf32>
// BF16-NEXT:  %[[S:.*]] = nn.div %[[G32]], %[[SD]] : (tensor<24xf32>, tensor<24xf32>) -> tensor<24xf32>
// BF16-NEXT:  %[[S4:.*]] = nn.reshape %[[S]] : tensor<24xf32> -> tensor<24x1x1x1xf32>
// BF16:       %[[SH:.*]] = nn.sub %{{.*}}, %[[M32]] : (tensor<24xf32>, tensor<24xf32>) -> tensor<24xf32>
// BF16-NEXT:  %[[SC:.*]] = nn.mul %[[SH]], %[[S]] : (tensor<24xf32>, tensor<24xf32>) -> tensor<24xf32>
// BF16-NEXT:  %[[BI:.*]] = nn.add %[[SC]], %[[B32]] : (tensor<24xf32>, tensor<24xf32>) -> tensor<24xf32>
// BF16-NEXT:  %[[W16:.*]] = nn.cast %[[S4]] : tensor<24x1x1x1xf32> -> tensor<24x1x1x1xbf16>
// BF16-NEXT:  %[[B16:.*]] = nn.cast %[[BI]] : tensor<24xf32> -> tensor<24xbf16>
// BF16-NEXT:  %[[D:.*]] = nn.fused_conv2d %[[X]], %[[W16]], %[[B16]] {{.*}} groups 24 activation "relu" {kernel = #nn.kernel<"fused_conv2d_onednn"{{.*}} -> tensor<1x24x8x8xbf16>
// BF16:       nn.conv2d %[[D]], %{{.*}} {kernel = #nn.kernel<"conv2d_onednn"{{.*}} -> tensor<1x16x8x8xbf16>
// BF16-NOT:   nn.batch_norm
// BF16-REMARK-NOT: [convert-to-bf16]
// NO-BF16-NOT: bf16
// NO-BF16:     nn.fused_conv2d {{.*}} groups 24 activation "relu" {kernel = #nn.kernel<"fused_conv2d_onednn"{{.*}} -> tensor<1x24x8x8xf32>
// NO-BF16-REMARK: remark: [convert-to-bf16] nn.batch_norm: nothing runs in bf16 on target 'onednn': batch_norm_onednn: the CPU has no AVX512_BF16 (or oneDNN is capped below it): bf16 would be emulated; the function stays f32
