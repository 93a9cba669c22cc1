// Tensor-level passes refuse a module that is already bufferized, at its first nn.compute:
// a second default-pipeline, or one after bufferize, broke nn.compute bodies.
// RUN: nnlayout-opt %s -p 'default-pipeline{target=avx2}' -o %t.mlir
// RUN: not nnlayout-opt %t.mlir -p 'default-pipeline{target=avx2}' 2>&1 | filecheck %s
// RUN: not nnlayout-opt %t.mlir -p propagate-layouts 2>&1 | filecheck %s --check-prefix=PROPAGATE
// RUN: nnlayout-opt %s -p bufferize -o %t.buffers.mlir
// RUN: not nnlayout-opt %t.buffers.mlir -p 'select-dispatch{target=avx2}' 2>&1 | filecheck %s --check-prefix=DISPATCH

func.func @f(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %y = nn.relu %x : tensor<1x16x8x8xf32>
  func.return %y : tensor<1x16x8x8xf32>
}
// CHECK: error: default-pipeline (fuse-activations): this pass rewrites tensor-level IR, and the module is already bufferized (nn.compute on buffers): run it before bufferize
// CHECK-NOT: Traceback
// PROPAGATE: error: propagate-layouts: this pass rewrites tensor-level IR, and the module is already bufferized
// DISPATCH: buffers.mlir:4:5: error: select-dispatch: this pass rewrites tensor-level IR
