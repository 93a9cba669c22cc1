// mlir-opt's pipeline syntax: anchored on the module, by -p or --pass-pipeline.
// RUN: nnlayout-opt %s -p 'builtin.module(select-dispatch{target=avx2}, insert-layouts)' | filecheck %s
// RUN: nnlayout-opt %s --pass-pipeline='builtin.module(select-dispatch{target=avx2},insert-layouts)' | filecheck %s
// RUN: not nnlayout-opt %s --pass-pipeline='builtin.module(func.func(canonicalize))' 2>&1 | filecheck %s --check-prefix=NESTED

func.func @f(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %w = nn.constant dense<0.1> : tensor<16x16x3x3xf32>
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  func.return %c : tensor<1x16x8x8xf32>
}
// CHECK: builtin.module attributes {nnlayout.target = "avx2"
// CHECK: layout.reorder %x
// CHECK: nn.conv2d {{.*}}#nn.kernel<"conv2d_nchwc"

// NESTED: error: bad pass pipeline 'builtin.module(func.func(canonicalize))': a pipeline nested on 'func.func' is not supported; nnlayout's passes run on the whole module
