// nnlayout-import of reductions as torch's exporters write them: a mean over H and W is a
// global average pool (keepdims 0: and a reshape), a max over them a max pool over the whole
// image; other reductions are nn.reduce, keeping the reduced axes; LayerNormalization's
// statistics outputs are reductions beside it (here InvStdDev: Mean is not read).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/reductions_onnx.py %t/r.onnx
// RUN: nnlayout-import %t/r.onnx -o %t/r.mlir
// RUN: filecheck %s < %t/r.mlir
// RUN: nnlayout-run %t/r.mlir --random-inputs 0 --output-dir %t/out | filecheck %s --check-prefix=OUT

// CHECK:      %0 = nn.global_avg_pool %x : tensor<1x5x4x4xf32> -> tensor<1x5x1x1xf32>
// CHECK-NEXT: %mean_hw = nn.reshape %0 : tensor<1x5x1x1xf32> -> tensor<1x5xf32>
// CHECK-NEXT: %max_hw = nn.max_pool2d %x kernel [4, 4] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x5x4x4xf32> -> tensor<1x5x1x1xf32>
// CHECK-NEXT: %mean_c = nn.reduce %x kind "mean" axes [1] : tensor<1x5x4x4xf32> -> tensor<1x1x4x4xf32>
// CHECK-NEXT: %1 = nn.reduce %x kind "sum" axes [0, 1, 2, 3] : tensor<1x5x4x4xf32> -> tensor<1x1x1x1xf32>
// CHECK-NEXT: %sum_all = nn.reshape %1 : tensor<1x1x1x1xf32> -> tensor<f32>
// CHECK-NEXT: %lrn = nn.lrn %x size 3 alpha 1.000000e-04 beta 7.500000e-01 bias 1.000000e+00 : tensor<1x5x4x4xf32>
// CHECK:      %norm = nn.layer_norm %x, %scale axis -1 epsilon 1.000000e-05 : (tensor<1x5x4x4xf32>, tensor<4xf32>) -> tensor<1x5x4x4xf32>
// CHECK-NEXT: %[[MEAN:.*]] = nn.reduce %x kind "mean" axes [3] : tensor<1x5x4x4xf32> -> tensor<1x5x4x1xf32>
// CHECK-NEXT: nn.sub %x, %[[MEAN]]
// CHECK:      %inv = nn.div

// OUT: result0: [1, 5] float32
// OUT: result3: [] float32
// OUT: result6: [1, 5, 4, 1] float32
