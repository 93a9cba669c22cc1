// nnlayout-run: a constant-only function (exact arithmetic, so the checksums are stable),
// a function with a .npy input, and clean errors for bad inputs.
// RUN: nnlayout-run %s --entry consts --output-dir %t | filecheck %s
// RUN: %python -c "import numpy as np; np.save(r'%t.x.npy', np.arange(-3, 3, dtype=np.float32).reshape(2, 3))"
// RUN: nnlayout-run %s --entry scaled --input %t.x.npy --output-dir %t | filecheck %s --check-prefix=INPUT
// RUN: nnlayout-run %s --entry scaled --random-inputs 0 --output-dir %t | filecheck %s --check-prefix=RANDOM
// RUN: not nnlayout-run %s --entry scaled --input %t.x.npy %t.x.npy --output-dir %t 2>&1 | filecheck %s --check-prefix=COUNT
// RUN: not nnlayout-run %s --entry scaled --input %s --output-dir %t 2>&1 | filecheck %s --check-prefix=NOTNPY
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s --check-prefix=AMBIGUOUS
// RUN: nnlayout-run %s --entry scaled -p 'default-pipeline{target=avx2}' --random-inputs 0 --output-dir %t --backend generated --profile 2 | filecheck %s --check-prefix=PROFILE

!blocked = tensor<1x3x4x4xf32, #layout.layout<"NCHW8c">>

func.func @consts() -> (tensor<2x3xf32>, tensor<1x4x4x4xf32>) {
  %a = nn.constant dense<[[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]]> : tensor<2x3xf32>
  %r = nn.relu %a : tensor<2x3xf32>
  %x = nn.constant dense<1.0> : tensor<1x3x4x4xf32>
  %b = layout.reorder %x : tensor<1x3x4x4xf32> -> !blocked
  %n = nn.neg %b : !blocked
  %p = layout.reorder %n : !blocked -> tensor<1x3x4x4xf32>
  %w = nn.constant dense<0.5> : tensor<4x3x3x3xf32>
  %c = nn.conv2d %p, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  func.return %r, %c : tensor<2x3xf32>, tensor<1x4x4x4xf32>
}
// relu keeps 1 + 3 + 5; the conv sums 0.5 * -1 over 12 taps at corners, 18 on edges,
// 27 inside: 4 channels * -(4*6 + 8*9 + 4*13.5) = -600.
// CHECK: result0: [2, 3] float32 sum=9 crc32={{[0-9a-f]{8}$}}
// CHECK-NEXT: result1: [1, 4, 4, 4] float32 sum=-600 crc32={{[0-9a-f]{8}$}}
// CHECK-NOT: result2

func.func @scaled(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %two = nn.constant dense<2.0> : tensor<3xf32>
  %m = nn.mul %x, %two : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %a = nn.abs %m : tensor<2x3xf32>
  func.return %a : tensor<2x3xf32>
}
// |2 * [-3 .. 2]| sums to 2 * (3 + 2 + 1 + 0 + 1 + 2) = 18.
// INPUT: result0: [2, 3] float32 sum=18 crc32=
// RANDOM: result0: [2, 3] float32 sum={{[0-9.]+}} crc32=
// COUNT: error: @scaled takes 1 input(s) (argument 1 (%x): [2, 3] float32), got 2
// NOTNPY: error: argument 1 (%x): '{{.*}}run.mlir' is not a .npy file
// AMBIGUOUS: error: the module has 2 public functions (@consts, @scaled); name the one to run (--entry NAME)
// PROFILE:      profile of @scaled: 2 run(s), median {{[0-9.]+}} ms per run, of which the ops {{[0-9.]+}} ms
// PROFILE-NEXT:     #        ms      %  op
// PROFILE-NEXT:     0 {{ *[0-9.]+ +[0-9.]+}}  nn.mul (mul_any) 2x3
// PROFILE-NEXT:     1 {{ *[0-9.]+ +[0-9.]+}}  nn.abs (abs_any) 2x3
// PROFILE-EMPTY:
// PROFILE-NEXT:        ms      %   ops  kernel [oneDNN or numpy's BLAS implementation]
