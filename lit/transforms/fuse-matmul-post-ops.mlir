// REQUIRES: onednn
// RUN: nnlayout-opt %s --split-input-file -p 'extend-ranks,select-dispatch{target=onednn},fuse-matmul-post-ops{target=onednn}' | filecheck %s
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics -p 'extend-ranks,select-dispatch{target=onednn},fuse-matmul-post-ops{target=onednn}'
// RUN: nnlayout-opt %s --split-input-file -p 'extend-ranks,select-dispatch{target=avx2},fuse-matmul-post-ops{target=avx2}' | filecheck %s --check-prefix=AVX2
// Without options, the pass takes the target select-dispatch recorded on the module.
// RUN: nnlayout-opt %s --split-input-file -p 'extend-ranks,select-dispatch{target=onednn}' | nnlayout-opt --split-input-file -p fuse-matmul-post-ops | filecheck %s

// A transformer's MLP: matmul -> add (the bias, which extend-ranks reshapes to the result's
// rank) -> gelu (tanh) becomes one oneDNN matmul with a bias and an eltwise post-op; the
// second Linear takes its bias (written first, as the classic exporter does).
func.func @mlp(%x: tensor<1x12x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>, %w2: tensor<32x8xf32>, %b2: tensor<8xf32>) -> tensor<1x12x8xf32> {
  %p = nn.matmul %x, %w1 : (tensor<1x12x16xf32>, tensor<16x32xf32>) -> tensor<1x12x32xf32>
  %s = nn.add %p, %b1 : (tensor<1x12x32xf32>, tensor<32xf32>) -> tensor<1x12x32xf32>
  %g = nn.gelu %s approximate "tanh" : tensor<1x12x32xf32>
  %q = nn.matmul %g, %w2 : (tensor<1x12x32xf32>, tensor<32x8xf32>) -> tensor<1x12x8xf32>
  %y = nn.add %b2, %q : (tensor<8xf32>, tensor<1x12x8xf32>) -> tensor<1x12x8xf32>
  func.return %y : tensor<1x12x8xf32>
}
// CHECK-LABEL: func.func @mlp
// CHECK-NEXT:    %g = nn.fused_matmul %x, %w1 bias %b1 activation "gelu" approximate "tanh" {kernel = #nn.kernel<"fused_matmul_onednn"{{.*}}>} : (tensor<1x12x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<1x12x32xf32>
// CHECK-NEXT:    %y = nn.fused_matmul %g, %w2 bias %b2 {kernel = #nn.kernel<"fused_matmul_onednn"{{.*}}>} : (tensor<1x12x32xf32>, tensor<32x8xf32>, tensor<8xf32>) -> tensor<1x12x8xf32>
// CHECK-NEXT:    func.return %y
// The numpy kernels take no post-ops: nothing changes.
// AVX2-LABEL: func.func @mlp
// AVX2-NOT:     nn.fused_matmul

// -----

// The exact GELU fuses too: oneDNN's gelu_erf turns +inf into NaN, so the kernel runs the
// fused primitive on calls whose product its operands' norms prove finite, and the
// reference otherwise.
func.func @exact_gelu(%x: tensor<12x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<12x32xf32> {
  %p = nn.matmul %x, %w : (tensor<12x16xf32>, tensor<16x32xf32>) -> tensor<12x32xf32>
  %s = nn.add %p, %b : (tensor<12x32xf32>, tensor<32xf32>) -> tensor<12x32xf32>
  %g = nn.gelu %s : tensor<12x32xf32>
  func.return %g : tensor<12x32xf32>
}
// CHECK-LABEL: func.func @exact_gelu
// CHECK-NEXT:    %g = nn.fused_matmul %x, %w bias %b activation "gelu" {kernel = #nn.kernel<"fused_matmul_onednn"
// CHECK-NEXT:    func.return %g

// -----

// A dense layer as ONNX's Gemm writes it (weights [N, K], read transposed) and its
// activation: a fused matmul reading the weights transposed, a constant expression
// computed at load (no kernel). relu without nnan is guarded as the exact GELU is.
func.func @dense(%x: tensor<2x16xf32>) -> tensor<2x8xf32> {
  %w = nn.constant dense<0.5> : tensor<8x16xf32>
  %c = nn.constant dense<1.0> : tensor<8xf32>
  %h = nn.gemm %x, %w, %c trans_b alpha 1.0 beta 1.0 : (tensor<2x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %y = nn.relu %h : tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}
// CHECK-LABEL: func.func @dense
// CHECK:         %[[T:.*]] = nn.transpose %w perm [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32>
// CHECK-NEXT:    %y = nn.fused_matmul %x, %[[T]] bias %c activation "relu" {kernel = #nn.kernel<"fused_matmul_onednn"
// CHECK-NEXT:    func.return %y
// AVX2-LABEL: func.func @dense
// AVX2-NOT:     nn.fused_matmul

// -----

// A gemm that is no dense layer keeps its activation, with a remark saying why.
func.func @transposed_rows(%x: tensor<16x2xf32>, %w: tensor<16x8xf32>) -> tensor<2x8xf32> {
  %h = nn.gemm %x, %w trans_a alpha 1.0 beta 1.0 : (tensor<16x2xf32>, tensor<16x8xf32>) -> tensor<2x8xf32>
  // expected-remark @+1 {{not fused into nn.gemm (gemm_onednn): its a is transposed (a dense layer's rows are not)}}
  %y = nn.sigmoid %h : tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}
// CHECK-LABEL: func.func @transposed_rows
// CHECK-NEXT:    %h = nn.gemm
// CHECK-NEXT:    %y = nn.sigmoid %h

// -----

// A product read elsewhere, and an addend that is no row of the result, stay as they are.
func.func @not_fused(%x: tensor<12x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>, %c: tensor<12x1xf32>) -> (tensor<12x8xf32>, tensor<12x8xf32>, tensor<12x8xf32>) {
  %p = nn.matmul %x, %w : (tensor<12x16xf32>, tensor<16x8xf32>) -> tensor<12x8xf32>
  %s = nn.add %p, %b : (tensor<12x8xf32>, tensor<8xf32>) -> tensor<12x8xf32>
  %q = nn.matmul %x, %w : (tensor<12x16xf32>, tensor<16x8xf32>) -> tensor<12x8xf32>
  %t = nn.add %q, %c : (tensor<12x8xf32>, tensor<12x1xf32>) -> tensor<12x8xf32>
  func.return %s, %p, %t : tensor<12x8xf32>, tensor<12x8xf32>, tensor<12x8xf32>
}
// CHECK-LABEL: func.func @not_fused
// CHECK-NOT:     nn.fused_matmul
