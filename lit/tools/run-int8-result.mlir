// nnlayout-run of a function whose result is a rank-1 i8 tensor: a buffer of its own, not
// taken for the arena (the plan check counted it as one and refused the plan), on the
// interpreter and the generated module.
// RUN: %python -c "import numpy as np; np.save(r'%t.x.npy', np.array([-1, 0, 0.5, 1, 2.2, 100], np.float32))"
// RUN: nnlayout-run %s --input %t.x.npy --output-dir %t -p 'default-pipeline{target=ref}' | filecheck %s
// RUN: nnlayout-run %s --input %t.x.npy --output-dir %t -p 'default-pipeline{target=onednn}' | filecheck %s
// RUN: nnlayout-run %s --input %t.x.npy --output-dir %t -p 'default-pipeline{target=onednn}' --backend generated | filecheck %s
// RUN: env NNLAYOUT_DISABLE_PADDING=1 nnlayout-run %s --input %t.x.npy --output-dir %t -p 'default-pipeline{target=host}' --backend generated | filecheck %s

func.func @main(%x: tensor<6xf32>) -> tensor<6xi8> {
  %r = nn.relu %x : tensor<6xf32>
  %q = nn.quantize %r {y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<3> : tensor<i8>} : tensor<6xf32> -> tensor<6xi8>
  func.return %q : tensor<6xi8>
}
// relu gives 0, 0, 0.5, 1, 2.2, 100; halved, rounded to even and shifted by 3:
// 3, 3, 4, 5, 7, and 203 saturated to 127.
// CHECK: result0: [6] int8 sum=149 crc32={{[0-9a-f]{8}$}}
