// nnlayout-import --batch N: the symbolic batch axis of every graph input takes the size N, as
// --input-shape x=3x10x5x4 gives it; where --input-shape or the model states the first size,
// it must be N; a bad N is a one-line error.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/shape_arithmetic.py %t
// RUN: nnlayout-import %t/shuffle.onnx --batch 3 | filecheck %s
// RUN: nnlayout-import %t/shuffle.onnx --batch 3 --input-shape x=3x10x5x4 | filecheck %s
// RUN: not nnlayout-import %t/shuffle.onnx --batch 2 --input-shape x=3x10x5x4 2>&1 | filecheck %s --check-prefix=DISAGREE
// RUN: not nnlayout-import %t/fill.onnx --batch 2 2>&1 | filecheck %s --check-prefix=STATED
// RUN: not nnlayout-import %t/shuffle.onnx --batch 0 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: not nnlayout-import %t/shuffle.onnx --batch two 2>&1 | filecheck %s --check-prefix=WORD

// CHECK:      func.func @main(%x: tensor<3x10x5x4xf32>) -> tensor<3x10x5x4xf32> {
// CHECK-NEXT:   %a = nn.relu %x
// CHECK-NEXT:   %r = nn.reshape %a : tensor<3x10x5x4xf32> -> tensor<3x2x5x5x4xf32>

// DISAGREE: error: --batch 2 and --input-shape x=3x10x5x4 disagree on the first size of 'x'
// DISAGREE-NOT: Traceback
// STATED: error: --batch 2: graph input 'x' has batch size 1 in the model (export it with a symbolic batch axis)
// ZERO: nnlayout-import: error: argument --batch: expected a positive integer, got '0'
// WORD: nnlayout-import: error: argument --batch: expected a positive integer, got 'two'
