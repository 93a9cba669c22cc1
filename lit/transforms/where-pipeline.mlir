// nn.compare and nn.where through the default pipeline: the blocked family's "*" kernels in
// whatever layout their data has (plain on avx512, whose convolution here runs the reference
// kernel; channels-last on onednn, no reorder of the activations between the convolution and
// the relu), the i1 mask one byte per element in the arena (180 bytes for 1x5x6x6), and
// nn.where writing over y (operand 2) in place, as its kernel says. (The selection keeps the
// product where c > 0, so fuse-activations leaves it: the other way round it is a leaky ReLU.)
// RUN: nnlayout-opt %s -p 'default-pipeline{target=avx512}' | filecheck %s --check-prefixes=CHECK,ARENA
// RUN: nnlayout-opt %s -p 'default-pipeline{target=onednn}' | filecheck %s --check-prefix=NHWC

func.func @leaky(%x: tensor<1x3x6x6xf32>, %w: tensor<5x3x3x3xf32>) -> tensor<1x5x6x6xf32> {
  %zero = nn.constant dense<0.0> : tensor<f32>
  %tenth = nn.constant dense<0.1> : tensor<f32>
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x6x6xf32>, tensor<5x3x3x3xf32>) -> tensor<1x5x6x6xf32>
  %m = nn.compare "gt" %c, %zero : (tensor<1x5x6x6xf32>, tensor<f32>) -> tensor<1x5x6x6xi1>
  %s = nn.mul %c, %tenth : (tensor<1x5x6x6xf32>, tensor<f32>) -> tensor<1x5x6x6xf32>
  %y = nn.where %m, %s, %c : (tensor<1x5x6x6xi1>, tensor<1x5x6x6xf32>, tensor<1x5x6x6xf32>) -> tensor<1x5x6x6xf32>
  %r = nn.relu %y : tensor<1x5x6x6xf32>
  func.return %r : tensor<1x5x6x6xf32>
}
// ARENA: nnlayout.arena_bytes = 1728 : i64, nnlayout.lower_bound_bytes = 1728 : i64
// CHECK: %c = memref.view %arena[%[[AT:.*]]][] : memref<1728xi8> to memref<1x5x6x6xf32>
// CHECK: %[[MASK:.*]] = memref.view %arena[%{{.*}}][] : memref<1728xi8> to memref<1x5x6x6xi1>
// CHECK: nn.compare "gt" {{.*}}kernel = #nn.kernel<"compare_any", operands = ["*", "*"], results = ["*"]>
// CHECK: %y = memref.view %arena[%[[AT]]][] : memref<1728xi8> to memref<1x5x6x6xf32>
// CHECK: nn.compute ins(%[[MASK]], %s, %c : memref<1x5x6x6xi1>, memref<1x5x6x6xf32>, memref<1x5x6x6xf32>) outs(%y : memref<1x5x6x6xf32>)
// CHECK: nn.where {{.*}}kernel = #nn.kernel<"where_any", operands = ["*", "*", "*"], results = ["*"], in_place = 2>

// NHWC: nn.conv2d {{.*}}conv2d_onednn{{.*}} -> tensor<1x5x6x6xf32, #layout.layout<"NHWC">>
// NHWC-NOT: layout.reorder {{.*}}: tensor<1x5x6x6
// NHWC: nn.compare "gt" {{.*}}compare_any{{.*}} -> tensor<1x5x6x6xi1, #layout.layout<"NHWC">>
// NHWC-NOT: layout.reorder {{.*}}: tensor<1x5x6x6
// NHWC: nn.where {{.*}}where_any{{.*}} -> tensor<1x5x6x6xf32, #layout.layout<"NHWC">>
// NHWC-NOT: layout.reorder {{.*}}: tensor<1x5x6x6
// NHWC: nn.relu {{.*}}NHWC
// NHWC: layout.reorder %{{.*}} : tensor<1x5x6x6xf32, #layout.layout<"NHWC">> -> tensor<1x5x6x6xf32>
