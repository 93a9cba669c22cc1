// REQUIRES: onednn
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=onednn}' | filecheck %s --check-prefixes=CHECK,%onednn_isa
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics -p 'select-dispatch{target=onednn remarks=true}'
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=onednn},insert-layouts,fold-constants' | filecheck %s --check-prefix=STORED

// A classifier head: oneDNN's matmul, the transposed weights read through their strides, the
// bias as its bias row.
func.func @dense(%x: tensor<2x64xf32>, %w: tensor<10x64xf32>, %b: tensor<10xf32>) -> tensor<2x10xf32> {
  %y = nn.gemm %x, %w, %b trans_b alpha 1.0 beta 1.0 : (tensor<2x64xf32>, tensor<10x64xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  func.return %y : tensor<2x10xf32>
}
// CHECK-LABEL: func.func @dense
// CHECK: nn.gemm %x, %w, %b trans_b {{.*}} {kernel = #nn.kernel<"gemm_onednn", operands = ["", "", ""], results = [""]{{.*}}>}

// -----

// A constant b read transposed (a dense layer's weights, as ONNX's Gemm holds them) is a fully
// connected layer: oneDNN's inner product, its weights in the format it chose (brgemm:avx2's
// 8i8o blocks, preferred at a few rows), stored so by insert-layouts and fold-constants.
func.func @dense_constant(%x: tensor<2x64xf32>) -> tensor<2x10xf32> {
  %w = nn.constant dense<0.5> : tensor<10x64xf32>
  %y = nn.gemm %x, %w trans_b alpha 1.0 beta 1.0 : (tensor<2x64xf32>, tensor<10x64xf32>) -> tensor<2x10xf32>
  func.return %y : tensor<2x10xf32>
}
// CHECK-LABEL: func.func @dense_constant
// CHECK: nn.gemm %x, %w trans_b {{.*}} {kernel = #nn.kernel<"gemm_onednn", operands = ["", "OI8i8o"], results = [""]{{.*}}>}
// STORED-LABEL: func.func @dense_constant
// STORED-NEXT:    %w = nn.constant dense<5.000000e-01> : tensor<10x64xf32> -> tensor<10x64xf32, #layout.layout<"OI8i8o">>
// STORED-NEXT:    %y = nn.gemm %x, %w trans_b {{.*}}operands = ["", "OI8i8o"]{{.*}} : (tensor<2x64xf32>, tensor<10x64xf32, #layout.layout<"OI8i8o">>) -> tensor<2x10xf32>

// -----

// At more rows a fully connected layer is oneDNN's matmul on weights in its own format (its
// avx512_core code blocks them 16i64o; its avx2 code reads them K x N, stored transposed).
func.func @dense_rows(%x: tensor<32x64xf32>) -> tensor<32x10xf32> {
  %w = nn.constant dense<0.5> : tensor<10x64xf32>
  %y = nn.gemm %x, %w trans_b alpha 1.0 beta 1.0 : (tensor<32x64xf32>, tensor<10x64xf32>) -> tensor<32x10xf32>
  func.return %y : tensor<32x10xf32>
}
// CHECK-LABEL: func.func @dense_rows
// ISA-AVX512: nn.gemm {{.*}}operands = ["", "OI16i64o"]
// ISA-AVX2: nn.gemm {{.*}}operands = ["", "IO"]

// -----

// A b read transposed with trans_a is no fully connected layer: oneDNN's matmul, the constant
// stored K x N (IO) so that it reads rows, not swapped strides.
func.func @transposed_a(%x: tensor<64x2xf32>) -> tensor<2x10xf32> {
  %w = nn.constant dense<0.5> : tensor<10x64xf32>
  %y = nn.gemm %x, %w trans_a trans_b alpha 1.0 beta 1.0 : (tensor<64x2xf32>, tensor<10x64xf32>) -> tensor<2x10xf32>
  func.return %y : tensor<2x10xf32>
}
// CHECK-LABEL: func.func @transposed_a
// CHECK: nn.gemm {{.*}}operands = ["", "IO"]
// STORED-LABEL: func.func @transposed_a
// STORED-NEXT:    %w = nn.constant dense<5.000000e-01> : tensor<10x64xf32> -> tensor<10x64xf32, #layout.layout<"IO">>

// -----

// A transformer's Linear on [B, T, C] (a matmul with 2-D constant weights [K, N], our O and I)
// is a matmul over B * T rows (more than 8: else an inner product); its weights, oneDNN's
// (K, N), are named on [K, N] (plain on AVX2).
func.func @linear3d(%x: tensor<2x5x12xf32>) -> tensor<2x5x20xf32> {
  %w = nn.constant dense<0.5> : tensor<12x20xf32>
  %y = nn.matmul %x, %w : (tensor<2x5x12xf32>, tensor<12x20xf32>) -> tensor<2x5x20xf32>
  func.return %y : tensor<2x5x20xf32>
}
// CHECK-LABEL: func.func @linear3d
// ISA-AVX512: nn.matmul %x, %w {kernel = #nn.kernel<"matmul_onednn", operands = ["", "OI16o64i"], results = [""]{{.*}}>}
// ISA-AVX2: nn.matmul %x, %w {kernel = #nn.kernel<"matmul_onednn", operands = ["", ""], results = [""]{{.*}}>}
// STORED-LABEL: func.func @linear3d
// STORED-NEXT:    %w = nn.constant dense<5.000000e-01> : tensor<12x20xf32>{{( -> tensor<12x20xf32, #layout.layout<"OI16o64i">>)?}}

// -----

// Attention's products of activations ([B, H, T, D] x [B, H, D, T]), batch dims broadcast:
// oneDNN's matmul on the plain arrays.
func.func @scores(%q: tensor<1x3x5x4xf32>, %k: tensor<3x4x5xf32>) -> tensor<1x3x5x5xf32> {
  %y = nn.matmul %q, %k : (tensor<1x3x5x4xf32>, tensor<3x4x5xf32>) -> tensor<1x3x5x5xf32>
  func.return %y : tensor<1x3x5x5xf32>
}
// CHECK-LABEL: func.func @scores
// CHECK: nn.matmul %q, %k {kernel = #nn.kernel<"matmul_onednn", operands = ["", ""], results = [""]{{.*}}>}

// -----

// What the matmul does not compute falls back, and says why.
func.func @scaled(%x: tensor<2x64xf32>, %w: tensor<10x64xf32>, %c: tensor<2x10xf32>) -> tensor<2x10xf32> {
  // expected-remark @+1 {{nn.gemm: alpha 2.0 (oneDNN's matmul here computes alpha = 1 only), not supported by gemm_onednn; using gemm_ref}}
  %y = nn.gemm %x, %w, %c trans_b alpha 2.0 beta 1.0 : (tensor<2x64xf32>, tensor<10x64xf32>, tensor<2x10xf32>) -> tensor<2x10xf32>
  // expected-remark @+1 {{nn.gemm: c of shape [2, 10] (oneDNN's bias is one row of 10, broadcast over the rows), not supported by gemm_onednn; using gemm_ref}}
  %z = nn.gemm %x, %w, %c trans_b alpha 1.0 beta 1.0 : (tensor<2x64xf32>, tensor<10x64xf32>, tensor<2x10xf32>) -> tensor<2x10xf32>
  %s = nn.add %y, %z : (tensor<2x10xf32>, tensor<2x10xf32>) -> tensor<2x10xf32>
  func.return %s : tensor<2x10xf32>
}
// CHECK-LABEL: func.func @scaled
// CHECK: nn.gemm {{.*}}alpha 2.0{{.*}}gemm_ref
// CHECK: nn.gemm {{.*}}gemm_ref
// CHECK: nn.add {{.*}}"add_onednn"

// -----

// Element-wise ops run on plain data of rank 1 to 6 (a transformer's tokens); beyond, in numpy.
func.func @ranks(%t: tensor<1x5x12xf32>, %b: tensor<1x1x12xf32>, %r: tensor<1x1x1x1x1x1x2xf32>) -> (tensor<1x5x12xf32>, tensor<1x1x1x1x1x1x2xf32>) {
  %a = nn.add %t, %b : (tensor<1x5x12xf32>, tensor<1x1x12xf32>) -> tensor<1x5x12xf32>
  %g = nn.gelu %a : tensor<1x5x12xf32>
  // expected-remark @+1 {{nn.gelu: rank 7; the oneDNN kernel takes ranks 1 to 6, not supported by gelu_onednn; using gelu_any}}
  %h = nn.gelu %r : tensor<1x1x1x1x1x1x2xf32>
  func.return %g, %h : tensor<1x5x12xf32>, tensor<1x1x1x1x1x1x2xf32>
}
// CHECK-LABEL: func.func @ranks
// CHECK: nn.add {{.*}}"add_onednn"
// CHECK: nn.gelu {{.*}}"gelu_onednn"
// CHECK: nn.gelu {{.*}}"gelu_any"

// -----

// relu and clip are oneDNN's max/min, which turn NaN into a bound: their kernels run oneDNN on
// calls whose input is finite and the numpy kernel on the others, so they are chosen like
// any element-wise op, in place.
func.func @max_min(%x: tensor<1x8x4x4xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) {
  %r = nn.relu %x : tensor<1x8x4x4xf32>
  %c = nn.clip %x min 0.0 max 6.0 : tensor<1x8x4x4xf32>
  func.return %r, %c : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
}
// CHECK-LABEL: func.func @max_min
// CHECK: nn.relu %x {kernel = #nn.kernel<"relu_onednn", operands = ["*"], results = ["*"], in_place = 0>}
// CHECK: nn.clip %x min 0.000000e+00 max 6.000000e+00 {kernel = #nn.kernel<"clip_onednn", operands = ["*"], results = ["*"], in_place = 0>}

// -----

// On AVX2, 1x1 convolutions take oneDNN's jit_1x1:avx2 (OIhw8i8o weights), the target's
// preference over brgconv_1x1:avx2, which oneDNN lists first; a 3x3 one keeps oneDNN's first
// choice (brgconv). On AVX-512 oneDNN's avx512_core choices stay: the preference is for avx2
// code, which oneDNN lists there too, after them, and which is slower there.
func.func @preferred(%x: tensor<1x64x14x14xf32>, %w1: tensor<128x64x1x1xf32>, %w3: tensor<128x128x3x3xf32>) -> tensor<1x128x14x14xf32> {
  %a = nn.conv2d %x, %w1 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x64x14x14xf32>, tensor<128x64x1x1xf32>) -> tensor<1x128x14x14xf32>
  %b = nn.conv2d %a, %w3 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x128x14x14xf32>, tensor<128x128x3x3xf32>) -> tensor<1x128x14x14xf32>
  func.return %b : tensor<1x128x14x14xf32>
}
// CHECK-LABEL: func.func @preferred
// ISA-AVX2: %a = nn.conv2d {{.*}} {kernel = #nn.kernel<"conv2d_onednn", operands = ["NHWC", "OIHW8i8o"], results = ["NHWC"]>}
// ISA-AVX512: %a = nn.conv2d {{.*}} {kernel = #nn.kernel<"conv2d_onednn", operands = ["NHWC", "OHWI64o"], results = ["NHWC"]{{.*}}>}
// CHECK: %b = nn.conv2d {{.*}} {kernel = #nn.kernel<"conv2d_onednn", operands = ["NHWC", "OHWI{{[0-9]+}}o"], results = ["NHWC"]{{.*}}>}

// -----

// A grouped convolution (4 groups of 16 channels) runs on the channels-last activations of
// the convolutions around it, with its weights blocked per group: oneDNN's gOIhw16i16o
// (avx512_core jit) or gOhwi16o (avx2 brgconv) are our OIHW16i16o and OHWI16o of the 4-D
// weights, as each group holds whole blocks. oneDNN's own first choice would be blocked
// activations, with a reorder on each side; before these formats were named, a gemm on nchw,
// 3x slower.
func.func @grouped(%x: tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32> {
  %w = nn.constant dense<0.5> : tensor<64x16x3x3xf32>
  %y = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 4 : (tensor<1x64x14x14xf32>, tensor<64x16x3x3xf32>) -> tensor<1x64x14x14xf32>
  func.return %y : tensor<1x64x14x14xf32>
}
// CHECK-LABEL: func.func @grouped
// ISA-AVX512: %y = nn.conv2d {{.*}} groups 4 {kernel = #nn.kernel<"conv2d_onednn", operands = ["NHWC", "OIHW16i16o"], results = ["NHWC"]>}
// ISA-AVX2: %y = nn.conv2d {{.*}} groups 4 {kernel = #nn.kernel<"conv2d_onednn", operands = ["NHWC", "OHWI16o"], results = ["NHWC"]{{.*}}>}
// STORED-LABEL: func.func @grouped
// STORED: %w = nn.constant dense<5.000000e-01> : tensor<64x16x3x3xf32> -> tensor<64x16x3x3xf32, #layout.layout<"{{OIHW16i16o|OHWI16o}}">>

// -----

// Squeeze-and-excitation: a per-channel scale [N, C, 1, 1] times the activations. oneDNN's
// binary broadcasts its second source, so scale * x (as torchvision writes it) runs with its
// operands swapped, and a subtraction from the scale, which cannot be swapped, falls back
// (to the numpy kernel that runs in any layout, so no activation is reordered for it). Both
// may write over their operand of the result's shape, operand 1, never over the scale.
func.func @excitation(%x: tensor<1x64x14x14xf32>, %s: tensor<1x64x1x1xf32>) -> tensor<1x64x14x14xf32> {
  %m = nn.mul %s, %x : (tensor<1x64x1x1xf32>, tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32>
  // expected-remark @+1 {{nn.sub: operand 0 broadcasts, and oneDNN broadcasts only its second source, which nn.sub does not let us swap, not supported by sub_onednn; using sub_any}}
  %d = nn.sub %s, %m : (tensor<1x64x1x1xf32>, tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32>
  func.return %d : tensor<1x64x14x14xf32>
}
// CHECK-LABEL: func.func @excitation
// CHECK: %m = nn.mul %s, %x {kernel = #nn.kernel<"mul_onednn", operands = ["*", "*"], results = ["*"], in_place = 1>}
// CHECK: %d = nn.sub %s, %m {kernel = #nn.kernel<"sub_any", operands = ["*", "*"], results = ["*"], in_place = 1>}

// -----

// A transpose of plain data is oneDNN's reorder between strided descriptors; beyond rank 6,
// in numpy.
func.func @transposes(%t: tensor<1x5x12xf32>, %r: tensor<1x1x1x1x1x2x3xf32>) -> (tensor<1x12x5xf32>, tensor<1x1x1x1x1x3x2xf32>) {
  %a = nn.transpose %t perm [0, 2, 1] : tensor<1x5x12xf32> -> tensor<1x12x5xf32>
  // expected-remark @+1 {{nn.transpose: rank 7; the oneDNN kernel takes ranks 1 to 6, not supported by transpose_onednn; using transpose_ref}}
  %b = nn.transpose %r perm [0, 1, 2, 3, 4, 6, 5] : tensor<1x1x1x1x1x2x3xf32> -> tensor<1x1x1x1x1x3x2xf32>
  func.return %a, %b : tensor<1x12x5xf32>, tensor<1x1x1x1x1x3x2xf32>
}
// CHECK-LABEL: func.func @transposes
// CHECK: nn.transpose {{.*}}"transpose_onednn"
// CHECK: nn.transpose {{.*}}"transpose_ref"
