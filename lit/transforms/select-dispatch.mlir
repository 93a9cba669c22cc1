// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=avx512}' | filecheck %s
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=avx2}' | filecheck %s --check-prefix=AVX2
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=ref}' | filecheck %s --check-prefix=REF
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics -p 'select-dispatch{target=avx512 padding=false}'
// RUN: env NNLAYOUT_DISABLE_PADDING=1 nnlayout-opt %s --split-input-file -p 'select-dispatch{target=avx512}' | filecheck %s --check-prefix=NOPAD
// RUN: not nnlayout-opt %s -p 'select-dispatch{target=tpu}' 2>&1 | filecheck %s --check-prefix=BADTARGET

// The C=3 stem conv reads the image plain: padding 3 channels to a block of 16 (avx512) or 8
// (avx2) would multiply its work by 5.3 or 2.7. Its weights are the GEMM's matrix, input
// channels and taps first, output channels in blocks; its result is blocked.
func.func @stem(%x: tensor<1x3x32x32xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf32>) -> tensor<1x16x32x32xf32> {
  %y = nn.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x32x32xf32>
  func.return %y : tensor<1x16x32x32xf32>
}
// CHECK-LABEL: func.func @stem
// CHECK: nn.conv2d {{.*}} {kernel = #nn.kernel<"conv2d_nchwc", operands = ["", "IHWO16o", "C16c"], results = ["NCHW16c"]>}
// AVX2-LABEL: func.func @stem
// AVX2: {kernel = #nn.kernel<"conv2d_nchwc", operands = ["", "IHWO8o", "C8c"], results = ["NCHW8c"]>}
// REF-LABEL: func.func @stem
// REF: {kernel = #nn.kernel<"conv2d_ref", operands = ["", "", ""], results = [""]>}
// NOPAD-LABEL: func.func @stem
// NOPAD: #nn.kernel<"conv2d_nchwc"

// -----

// 12 input channels: padded to one block of 16 (avx512); two blocks of 8 on avx2.
func.func @padded(%x: tensor<1x12x32x32xf32>, %w: tensor<16x12x3x3xf32>, %b: tensor<16xf32>) -> tensor<1x16x32x32xf32> {
  // expected-remark @+1 {{12 input channels are not a multiple of the block 16 and padding is off, not supported by conv2d_nchwc; using conv2d_ref}}
  %y = nn.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x12x32x32xf32>, tensor<16x12x3x3xf32>, tensor<16xf32>) -> tensor<1x16x32x32xf32>
  func.return %y : tensor<1x16x32x32xf32>
}
// CHECK-LABEL: func.func @padded
// CHECK: nn.conv2d {{.*}} {kernel = #nn.kernel<"conv2d_nchwc", operands = ["NCHW16c", "IHW16iO16o", "C16c"], results = ["NCHW16c"]>}
// AVX2-LABEL: func.func @padded
// AVX2: {kernel = #nn.kernel<"conv2d_nchwc", operands = ["NCHW8c", "IHW8iO8o", "C8c"], results = ["NCHW8c"]>}
// REF-LABEL: func.func @padded
// REF: {kernel = #nn.kernel<"conv2d_ref", operands = ["", "", ""], results = [""]>}
// NOPAD-LABEL: func.func @padded
// NOPAD: #nn.kernel<"conv2d_ref"
// BADTARGET: error: select-dispatch: unknown target 'tpu'; known targets: avx2, avx512, host, onednn, {{.*}}ref

// -----

// A grouped convolution is blocked when each group holds whole blocks of channels (8 here:
// avx2's blocks, one GEMM per group); else it falls back and says why.
func.func @grouped(%x: tensor<1x32x16x16xf32>, %w: tensor<32x8x3x3xf32>) -> tensor<1x32x16x16xf32> {
  // expected-remark @+1 {{grouped convolution (groups=4) with 8 input and 8 output channels a group, not multiples of the block 16, not supported by conv2d_nchwc; using conv2d_ref}}
  %y = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 4 : (tensor<1x32x16x16xf32>, tensor<32x8x3x3xf32>) -> tensor<1x32x16x16xf32>
  %r = nn.relu %y : tensor<1x32x16x16xf32>
  %s = nn.softmax %r axis 1 : tensor<1x32x16x16xf32>
  func.return %s : tensor<1x32x16x16xf32>
}
// CHECK-LABEL: func.func @grouped
// CHECK: nn.conv2d {{.*}} {kernel = #nn.kernel<"conv2d_ref"
// AVX2-LABEL: func.func @grouped
// AVX2: nn.conv2d {{.*}} groups 4 {kernel = #nn.kernel<"conv2d_nchwc", operands = ["NCHW8c", "IHW8iO8o"], results = ["NCHW8c"]>}
// CHECK: nn.relu {{.*}} {kernel = #nn.kernel<"relu_any", operands = ["*"], results = ["*"], in_place = 0>}
// CHECK: nn.softmax {{.*}} {kernel = #nn.kernel<"softmax_ref", operands = [""], results = [""]>}
// REF-LABEL: func.func @grouped
// REF: nn.relu {{.*}} {kernel = #nn.kernel<"relu_ref", operands = [""], results = [""], in_place = 0>}

// -----

// A tiny convolution stays plain: reorders would cost more than blocking gains.
func.func @tiny(%x: tensor<1x16x2x2xf32>, %w: tensor<16x16x1x1xf32>) -> tensor<1x16x2x2xf32> {
  // expected-remark @+1 {{too small to gain from blocking}}
  %y = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x16x2x2xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x2x2xf32>
  func.return %y : tensor<1x16x2x2xf32>
}
// CHECK-LABEL: func.func @tiny
// CHECK: #nn.kernel<"conv2d_ref"

// -----

// A layout hand-written IR already gives an operand is asked of a kernel taking any layout:
// mul_any would broadcast the mask's padding lanes over channels 1 and 2.
func.func @mask_in_channel_blocks(%x: tensor<1x3x5x5xf32, #layout.layout<"NCHW8c">>, %m: tensor<1x1x5x5xf32, #layout.layout<"NCHW8c">>) -> tensor<1x3x5x5xf32, #layout.layout<"NCHW8c">> {
  // expected-remark @+1 {{nn.mul: operand 1 [1, 1, 5, 5] broadcasts along axis C, which layout 'NCHW8c' blocks, not supported by mul_any; using mul_ref}}
  %y = nn.mul %x, %m : (tensor<1x3x5x5xf32, #layout.layout<"NCHW8c">>, tensor<1x1x5x5xf32, #layout.layout<"NCHW8c">>) -> tensor<1x3x5x5xf32, #layout.layout<"NCHW8c">>
  func.return %y : tensor<1x3x5x5xf32, #layout.layout<"NCHW8c">>
}
// CHECK-LABEL: func.func @mask_in_channel_blocks
// CHECK: nn.mul {{.*}}#nn.kernel<"mul_ref"
