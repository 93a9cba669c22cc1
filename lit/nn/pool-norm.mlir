// Round trip of pooling, batch_norm, softmax and log_softmax, in the pretty and the generic form.
// RUN: nnlayout-opt %s | nnlayout-opt | filecheck %s
// RUN: nnlayout-opt %s --print-op-generic > %t
// RUN: filecheck %s --check-prefix=GENERIC < %t
// RUN: nnlayout-opt %t | filecheck %s

func.func @pool(%x: tensor<1x64x112x112xf32>, %s: tensor<1x8x2x2xf32>) -> (tensor<1x64x56x56xf32>, tensor<1x64x57x57xf32>, tensor<1x64x56x56xf32>, tensor<1x64x1x1xf32>) {
  %0 = nn.max_pool2d %x kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  %1 = nn.max_pool2d %x kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] ceil_mode : tensor<1x64x112x112xf32> -> tensor<1x64x57x57xf32>
  %2 = nn.avg_pool2d %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  %3 = nn.avg_pool2d %x kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] ceil_mode count_include_pad : tensor<1x64x112x112xf32> -> tensor<1x64x57x57xf32>
  %4 = nn.avg_pool2d %x kernel [3, 3] strides [2, 2] pads [0, 0, 1, 1] dilations [1, 1] count_include_pad : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  %5 = nn.global_avg_pool %x : tensor<1x64x112x112xf32> -> tensor<1x64x1x1xf32>
  %6 = nn.max_pool2d %s kernel [3, 3] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] ceil_mode : tensor<1x8x2x2xf32> -> tensor<1x8x1x1xf32>
  func.return %0, %1, %4, %5 : tensor<1x64x56x56xf32>, tensor<1x64x57x57xf32>, tensor<1x64x56x56xf32>, tensor<1x64x1x1xf32>
}
// CHECK-LABEL: func.func @pool
// CHECK:      %0 = nn.max_pool2d %x kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
// CHECK-NEXT: %1 = nn.max_pool2d %x kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] ceil_mode : tensor<1x64x112x112xf32> -> tensor<1x64x57x57xf32>
// CHECK-NEXT: %2 = nn.avg_pool2d %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
// CHECK-NEXT: %3 = nn.avg_pool2d %x kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] ceil_mode count_include_pad : tensor<1x64x112x112xf32> -> tensor<1x64x57x57xf32>
// CHECK-NEXT: %4 = nn.avg_pool2d %x kernel [3, 3] strides [2, 2] pads [0, 0, 1, 1] dilations [1, 1] count_include_pad : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
// CHECK-NEXT: %5 = nn.global_avg_pool %x : tensor<1x64x112x112xf32> -> tensor<1x64x1x1xf32>
// A ceil_mode window may hang over the end, even the first one (ONNX, PyTorch).
// CHECK-NEXT: %6 = nn.max_pool2d %s kernel [3, 3] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] ceil_mode : tensor<1x8x2x2xf32> -> tensor<1x8x1x1xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "pool"
// GENERIC:      %0 = "nn.max_pool2d"(%x) <{kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>}> : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
// GENERIC-NEXT: %1 = "nn.max_pool2d"(%x) <{kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode}>
// GENERIC:      %3 = "nn.avg_pool2d"(%x) <{{.*}}ceil_mode{{.*}}count_include_pad{{.*}}}>
// GENERIC:      %5 = "nn.global_avg_pool"(%x) : (tensor<1x64x112x112xf32>) -> tensor<1x64x1x1xf32>

func.func @norm(%x: tensor<2x16x8x8xf32>, %p: tensor<16xf32>, %l: tensor<2x1000xf32>, %t: tensor<2x3x4xf32>) -> (tensor<2x16x8x8xf32>, tensor<2x1000xf32>, tensor<2x3x4xf32>, tensor<2x1000xf32>) {
  %0 = nn.batch_norm %x, %p, %p, %p, %p epsilon 1.0e-03 : (tensor<2x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x16x8x8xf32>
  %1 = nn.softmax %l axis 1 : tensor<2x1000xf32>
  %2 = nn.softmax %t axis -2 : tensor<2x3x4xf32>
  %3 = nn.log_softmax %l axis -1 : tensor<2x1000xf32>
  func.return %0, %1, %2, %3 : tensor<2x16x8x8xf32>, tensor<2x1000xf32>, tensor<2x3x4xf32>, tensor<2x1000xf32>
}
// CHECK-LABEL: func.func @norm
// CHECK:      %0 = nn.batch_norm %x, %p, %p, %p, %p epsilon 1.000000e-03 : (tensor<2x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x16x8x8xf32>
// CHECK-NEXT: %1 = nn.softmax %l axis 1 : tensor<2x1000xf32>
// CHECK-NEXT: %2 = nn.softmax %t axis -2 : tensor<2x3x4xf32>
// CHECK-NEXT: %3 = nn.log_softmax %l axis -1 : tensor<2x1000xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "norm"
// GENERIC:      %0 = "nn.batch_norm"(%x, %p, %p, %p, %p) <{epsilon = 1.000000e-03 : f32}>
// GENERIC-NEXT: %1 = "nn.softmax"(%l) <{axis = 1 : i64}> : (tensor<2x1000xf32>) -> tensor<2x1000xf32>
// GENERIC-NEXT: %2 = "nn.softmax"(%t) <{axis = -2 : i64}>
// GENERIC-NEXT: %3 = "nn.log_softmax"(%l) <{axis = -1 : i64}>

// Where max pooling's maxima are: i64 flat indices, row-major or column-major.
func.func @max_pool_indices(%x: tensor<1x8x6x6xf32>) -> (tensor<1x8x3x3xi64>, tensor<1x8x3x3xi64>) {
  %0 = nn.max_pool2d_indices %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x8x6x6xf32> -> tensor<1x8x3x3xi64>
  %1 = nn.max_pool2d_indices %x kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] column_major : tensor<1x8x6x6xf32> -> tensor<1x8x3x3xi64>
  func.return %0, %1 : tensor<1x8x3x3xi64>, tensor<1x8x3x3xi64>
}
// CHECK-LABEL: func.func @max_pool_indices
// CHECK:      %0 = nn.max_pool2d_indices %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x8x6x6xf32> -> tensor<1x8x3x3xi64>
// CHECK-NEXT: %1 = nn.max_pool2d_indices %x kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] column_major : tensor<1x8x6x6xf32> -> tensor<1x8x3x3xi64>
// GENERIC:    "nn.max_pool2d_indices"(%x) <{{.*}}column_major{{.*}}}> : (tensor<1x8x6x6xf32>) -> tensor<1x8x3x3xi64>
