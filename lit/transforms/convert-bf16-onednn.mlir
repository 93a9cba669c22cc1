// REQUIRES: onednn
// convert-to-bf16 on oneDNN: where the CPU has AVX512_BF16 (BF16) the convolution, relu and
// pooling become bf16 ops (oneDNN's bf16 primitives), the weights stay plain in the IR (oneDNN
// packs bf16 weights into its own format when the op is bound) and the buffers are bf16;
// elsewhere (NO-BF16) the function stays f32, with the remark saying why.
// RUN: nnlayout-opt %s -p 'default-pipeline{target=onednn bf16=true remarks=true}' 2>%t.err | filecheck %s --check-prefix=%onednn_bf16
// RUN: filecheck %s --check-prefix=%onednn_bf16-REMARK --allow-empty < %t.err

func.func @f(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32> {
  %w = nn.constant dense<0.5> : tensor<16x16x3x3xf32>
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %r = nn.relu %c : tensor<1x16x8x8xf32>
  %p = nn.max_pool2d %r kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x16x8x8xf32> -> tensor<1x16x4x4xf32>
  func.return %p : tensor<1x16x4x4xf32>
}
// BF16-LABEL: func.func @f(%x: memref<1x16x8x8xf32>) -> memref<1x16x4x4xf32>
// BF16:       nn.cast {{.*}}kernel = #nn.kernel<"cast_onednn"{{.*}} -> tensor<1x16x8x8xbf16{{.*}}>
// BF16:       nn.fused_conv2d {{.*}}kernel = #nn.kernel<"fused_conv2d_onednn", operands = [{{"[A-Z0-9a-z]*"}}, "", ""]{{.*}} -> tensor<1x16x8x8xbf16{{.*}}>
// BF16:       nn.max_pool2d {{.*}}kernel = #nn.kernel<"max_pool2d_onednn"{{.*}} -> tensor<1x16x4x4xbf16{{.*}}>
// BF16:       nn.cast {{.*}} -> tensor<1x16x4x4xf32{{.*}}>
// BF16-REMARK-NOT: [convert-to-bf16]
// NO-BF16-NOT: bf16
// NO-BF16-REMARK: remark: [convert-to-bf16] nn.conv2d: nothing runs in bf16 on target 'onednn': conv2d_onednn: the CPU has no AVX512_BF16 (or oneDNN is capped below it): bf16 would be emulated; the function stays f32
