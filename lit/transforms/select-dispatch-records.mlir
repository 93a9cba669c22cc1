// select-dispatch records its target and padding choice on the module, where the passes
// after it that choose kernels too (fuse-post-ops) read them.
// RUN: nnlayout-opt %s -p 'select-dispatch{target=avx512}' | filecheck %s
// RUN: nnlayout-opt %s -p 'select-dispatch{target=avx2 padding=false}' | filecheck %s --check-prefix=NOPAD
// RUN: nnlayout-opt %s -p 'default-pipeline{target=avx2 padding=false}' | filecheck %s --check-prefix=NOPAD
// A later run reads them: fuse-post-ops without options, or with the same ones.
// RUN: nnlayout-opt %s -p 'select-dispatch{target=avx512}' -o %t.mlir
// RUN: nnlayout-opt %t.mlir -p fuse-post-ops | filecheck %s
// RUN: nnlayout-opt %t.mlir -p 'fuse-post-ops{target=avx512 padding=true}' | filecheck %s
// An option that contradicts them is an error at the module (or, within one pipeline, where
// the module has no location, at its first dispatched op).
// RUN: not nnlayout-opt %t.mlir -p 'fuse-post-ops{target=avx2}' 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: not nnlayout-opt %s -p 'select-dispatch{target=avx512},fuse-post-ops{padding=false}' 2>&1 | filecheck %s --check-prefix=PADDING

// CHECK:       builtin.module attributes {nnlayout.target = "avx512", nnlayout.padding = true} {
// CHECK:         nn.conv2d {{.*}} {kernel = #nn.kernel<"conv2d_nchwc", operands = ["NCHW16c", "IHW16iO16o"], results = ["NCHW16c"]>}
// NOPAD:       builtin.module attributes {nnlayout.target = "avx2", nnlayout.padding = false} {
// TARGET:      select-dispatch-records.mlir.tmp.mlir:1:1: error: fuse-post-ops: target=avx2, but the module was dispatched with nnlayout.target = "avx512" (recorded by select-dispatch): leave target out, or give the same
// TARGET-NEXT: builtin.module attributes {nnlayout.target = "avx512", nnlayout.padding = true} {
// PADDING:     select-dispatch-records.mlir:[[# @LINE + 2]]:3: error: fuse-post-ops: padding=false, but the module was dispatched with nnlayout.padding = true (recorded by select-dispatch): leave padding out, or give the same
func.func @f(%x: tensor<1x16x8x8xf32>, %w: tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32> {
  %y = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  func.return %y : tensor<1x16x8x8xf32>
}
