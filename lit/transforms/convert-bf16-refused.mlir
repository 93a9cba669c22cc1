// convert-to-bf16 on targets without bf16 kernels is a no-op with one remark saying why: the
// blocked numpy kernels (avx2, avx512) compute f32; oneDNN's bf16 code needs AVX512_BF16
// (NO-BF16: this CPU lacks it, or ONEDNN_MAX_CPU_ISA=AVX2 caps oneDNN below it).
// RUN: nnlayout-opt %s --verify-diagnostics -p 'convert-to-bf16{target=avx512}' | filecheck %s --check-prefix=SAME
// RUN: nnlayout-opt %s -p 'default-pipeline{target=avx2 bf16=true remarks=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=AVX2

func.func @f(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %w = nn.constant dense<0.5> : tensor<16x16x3x3xf32>
  // expected-remark @+1 {{[convert-to-bf16] nn.conv2d: nothing runs in bf16 on target 'avx512': conv2d_nchwc: bf16 data (this kernel computes f32); the function stays f32}}
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %r = nn.relu %c : tensor<1x16x8x8xf32>
  func.return %r : tensor<1x16x8x8xf32>
}
// SAME-NOT: bf16
// SAME-NOT: nn.cast
// AVX2: remark: [convert-to-bf16] nn.conv2d: nothing runs in bf16 on target 'avx2': conv2d_nchwc: bf16 data (this kernel computes f32); the function stays f32
// AVX2-NOT: [convert-to-bf16]
