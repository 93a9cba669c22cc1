// REQUIRES: onednn
// Per-channel constants with oneDNN: Mul, Add and PRelu by [C, 1, 1] constants are its binary
// and prelu primitives in the convolutions' layout, whatever that is on this CPU.
// RUN: nnlayout-opt %S/per-channel-constants.mlir -p 'default-pipeline{target=onednn remarks=true}' 2>&1 | filecheck %s
// RUN: nnlayout-run %S/per-channel-constants.mlir --random-inputs 0 --output-dir %t.before > %t.txt
// RUN: nnlayout-run %S/per-channel-constants.mlir -p 'default-pipeline{target=onednn}' --random-inputs 0 --output-dir %t.after >> %t.txt
// RUN: filecheck %s --check-prefix=SAME < %t.txt

// SAME:      result0: [1, 20, 8, 8] float32 sum=[[SUM:-?[0-9]+]].{{[0-9]+}} crc32=
// SAME-NEXT: result0: [1, 20, 8, 8] float32 sum=[[SUM]].{{[0-9]+}} crc32=

// CHECK-NOT: not propagated
// CHECK: nn.mul {{.*}}#nn.kernel<"mul_onednn"
// CHECK: nn.add {{.*}}#nn.kernel<"add_onednn"
// CHECK: nn.prelu {{.*}}#nn.kernel<"prelu_onednn"
