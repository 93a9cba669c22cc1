// nnlayout-import --input-shape: a shape that agrees with the model's imports; one naming no
// input, one contradicting a size the model states, and a malformed one are one clean error.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -m nnlayout.examples.make_models --small unet -o %t
// RUN: nnlayout-import %t/unet_small.onnx -o %t/unet.mlir --input-shape image=1x3x32x32
// RUN: filecheck %s < %t/unet.mlir
// RUN: not nnlayout-import %t/unet_small.onnx -o %t/x.mlir --input-shape x=1x3x32x32 2>&1 | filecheck %s --check-prefix=NAME
// RUN: not nnlayout-import %t/unet_small.onnx -o %t/x.mlir --input-shape image=2x3x32x32 2>&1 | filecheck %s --check-prefix=SIZE
// RUN: not nnlayout-import %t/unet_small.onnx -o %t/x.mlir --input-shape image=1x3x32 2>&1 | filecheck %s --check-prefix=RANK
// RUN: not nnlayout-import %t/unet_small.onnx -o %t/x.mlir --input-shape image=1x3xNx32 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not nnlayout-import %t/unet_small.onnx -o %t/x.mlir --input-shape image=1x3x32x32 --input-shape image=1x3x32x32 2>&1 | filecheck %s --check-prefix=TWICE

// CHECK: func.func @main(%image: tensor<1x3x32x32xf32>)

// NAME: error: an input shape is given for 'x', which is not an input of the model (its inputs: 'image')
// NAME-NOT: Traceback
// SIZE: error: the input shape given for 'image' has size 2 on axis 0, but the model's input has size 1 there
// RANK: error: the input shape given for 'image' has rank 3, but the model's input has rank 4
// SYNTAX: nnlayout-import: error: argument --input-shape: expected NAME=DIMS with positive sizes separated by 'x' (e.g. images=1x3x224x224), got 'image=1x3xNx32'
// TWICE: error: --input-shape gives the shape of 'image' more than once
