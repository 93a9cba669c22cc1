// A key/value cache written at a run-time position through the default pipeline: nn.scatter
// runs its reference kernel on plain data and writes over its data where the data dies there
// (in_place = 0: the relu's buffer is the scatter's result, no copy of the cache).
// RUN: nnlayout-opt %s -p 'default-pipeline{target=onednn}' | filecheck %s

func.func @step(%cache: tensor<1x2x8x4xf32>, %pos: tensor<1xi64>, %k: tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32> {
  %r = nn.relu %cache : tensor<1x2x8x4xf32>
  %c = nn.scatter %r, %pos, %k axis 2 : (tensor<1x2x8x4xf32>, tensor<1xi64>, tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32>
  %y = nn.relu %c : tensor<1x2x8x4xf32>
  func.return %y : tensor<1x2x8x4xf32>
}
// CHECK: nnlayout.arena_bytes = 256 : i64, nnlayout.lower_bound_bytes = 256 : i64
// CHECK: %r = memref.view %arena[%[[AT:.*]]][] : memref<256xi8> to memref<1x2x8x4xf32>
// CHECK: %c = memref.view %arena[%[[AT]]][] : memref<256xi8> to memref<1x2x8x4xf32>
// CHECK: nn.scatter {{.*}} axis 2 {kernel = #nn.kernel<"scatter_ref", operands = ["", "", ""], results = [""], in_place = 0>}
