// Round trip of nn.slice, nn.pad, nn.resize, nn.channel_shuffle, nn.expand, nn.gather and nn.scatter, in the pretty and the
// generic form.
// RUN: nnlayout-opt %s | nnlayout-opt | filecheck %s
// RUN: nnlayout-opt %s --print-op-generic > %t
// RUN: filecheck %s --check-prefix=GENERIC < %t
// RUN: nnlayout-opt %t | filecheck %s

func.func @movement(%x: tensor<1x20x5x6xf32>) -> (tensor<1x4x2x3xf32>, tensor<1x20x7x8xf32>, tensor<1x20x10x12xf32>, tensor<1x20x5x6xf32>) {
  %0 = nn.slice %x starts [0, 3, 4, 5] sizes [1, 4, 2, 3] steps [1, 2, -1, -2] : tensor<1x20x5x6xf32> -> tensor<1x4x2x3xf32>
  %1 = nn.pad %x pads [0, 0, 1, 2, 0, 0, 1, 0] mode "reflect" value 0.0 : tensor<1x20x5x6xf32> -> tensor<1x20x7x8xf32>
  %2 = nn.resize %x mode "linear" coordinates "half_pixel" nearest "round_prefer_floor" scales [2.0, 2.0] : tensor<1x20x5x6xf32> -> tensor<1x20x10x12xf32>
  %3 = nn.channel_shuffle %x groups 4 : tensor<1x20x5x6xf32>
  %4 = nn.pad %x pads [0, 0, 0, 1, 0, 0, 0, 0] mode "constant" value 1.5 : tensor<1x20x5x6xf32> -> tensor<1x20x5x7xf32>
  %5 = nn.expand %x : tensor<1x20x5x6xf32> -> tensor<3x20x5x6xf32>
  func.return %0, %1, %2, %3 : tensor<1x4x2x3xf32>, tensor<1x20x7x8xf32>, tensor<1x20x10x12xf32>, tensor<1x20x5x6xf32>
}
// CHECK-LABEL: func.func @movement
// CHECK:      %0 = nn.slice %x starts [0, 3, 4, 5] sizes [1, 4, 2, 3] steps [1, 2, -1, -2] : tensor<1x20x5x6xf32> -> tensor<1x4x2x3xf32>
// CHECK-NEXT: %1 = nn.pad %x pads [0, 0, 1, 2, 0, 0, 1, 0] mode "reflect" value 0.000000e+00 : tensor<1x20x5x6xf32> -> tensor<1x20x7x8xf32>
// CHECK-NEXT: %2 = nn.resize %x mode "linear" coordinates "half_pixel" nearest "round_prefer_floor" scales [2.000000e+00, 2.000000e+00] : tensor<1x20x5x6xf32> -> tensor<1x20x10x12xf32>
// CHECK-NEXT: %3 = nn.channel_shuffle %x groups 4 : tensor<1x20x5x6xf32>
// CHECK-NEXT: %4 = nn.pad %x pads [0, 0, 0, 1, 0, 0, 0, 0] mode "constant" value 1.500000e+00 : tensor<1x20x5x6xf32> -> tensor<1x20x5x7xf32>
// CHECK-NEXT: %5 = nn.expand %x : tensor<1x20x5x6xf32> -> tensor<3x20x5x6xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "movement"
// GENERIC:      %0 = "nn.slice"(%x) <{starts = array<i64: 0, 3, 4, 5>, sizes = array<i64: 1, 4, 2, 3>, steps = array<i64: 1, 2, -1, -2>}>
// GENERIC:      %1 = "nn.pad"(%x) <{pads = array<i64: 0, 0, 1, 2, 0, 0, 1, 0>, mode = "reflect", value = 0.000000e+00 : f32}>
// GENERIC:      %2 = "nn.resize"(%x) <{mode = "linear", coordinates = "half_pixel", nearest = "round_prefer_floor", scales = array<f64: 2.000000e+00, 2.000000e+00>}>
// GENERIC:      %3 = "nn.channel_shuffle"(%x) <{groups = 4 : i64}>

// nn.gather reads its indices (i64 or i32) at run time; a table of quantized data too.
func.func @gather(%table: tensor<50x16xf32>, %ids: tensor<1x6xi64>, %x: tensor<2x5x3xui8>, %idx: tensor<2x2xi32>) -> (tensor<1x6x16xf32>, tensor<2x2x2x3xui8>) {
  %0 = nn.gather %table, %ids axis 0 : (tensor<50x16xf32>, tensor<1x6xi64>) -> tensor<1x6x16xf32>
  %1 = nn.gather %x, %idx axis 1 : (tensor<2x5x3xui8>, tensor<2x2xi32>) -> tensor<2x2x2x3xui8>
  func.return %0, %1 : tensor<1x6x16xf32>, tensor<2x2x2x3xui8>
}
// CHECK-LABEL: func.func @gather
// CHECK:      %0 = nn.gather %table, %ids axis 0 : (tensor<50x16xf32>, tensor<1x6xi64>) -> tensor<1x6x16xf32>
// CHECK-NEXT: %1 = nn.gather %x, %idx axis 1 : (tensor<2x5x3xui8>, tensor<2x2xi32>) -> tensor<2x2x2x3xui8>
// GENERIC-LABEL: "func.func"() <{sym_name = "gather"
// GENERIC:      %0 = "nn.gather"(%table, %ids) <{axis = 0 : i64}> : (tensor<50x16xf32>, tensor<1x6xi64>) -> tensor<1x6x16xf32>

// nn.scatter writes the updates' slices along an axis at run-time indices (a key/value
// cache), or combines them with a reduction.
func.func @scatter(%cache: tensor<1x2x8x4xf32>, %pos: tensor<1xi64>, %k: tensor<1x2x1x4xf32>, %m: tensor<6xi1>, %at: tensor<2xi32>, %v: tensor<2xi1>, %n: tensor<6xi64>, %w: tensor<2xi64>) -> (tensor<1x2x8x4xf32>, tensor<6xi1>, tensor<6xi64>) {
  %0 = nn.scatter %cache, %pos, %k axis 2 : (tensor<1x2x8x4xf32>, tensor<1xi64>, tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32>
  %1 = nn.scatter %m, %at, %v axis 0 : (tensor<6xi1>, tensor<2xi32>, tensor<2xi1>) -> tensor<6xi1>
  %2 = nn.scatter %n, %at, %w axis 0 reduction "add" : (tensor<6xi64>, tensor<2xi32>, tensor<2xi64>) -> tensor<6xi64>
  func.return %0, %1, %2 : tensor<1x2x8x4xf32>, tensor<6xi1>, tensor<6xi64>
}
// CHECK-LABEL: func.func @scatter
// CHECK:      %0 = nn.scatter %cache, %pos, %k axis 2 : (tensor<1x2x8x4xf32>, tensor<1xi64>, tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32>
// CHECK-NEXT: %1 = nn.scatter %m, %at, %v axis 0 : (tensor<6xi1>, tensor<2xi32>, tensor<2xi1>) -> tensor<6xi1>
// CHECK-NEXT: %2 = nn.scatter %n, %at, %w axis 0 reduction "add" : (tensor<6xi64>, tensor<2xi32>, tensor<2xi64>) -> tensor<6xi64>
// GENERIC-LABEL: "func.func"() <{sym_name = "scatter"
// GENERIC:      %0 = "nn.scatter"(%cache, %pos, %k) <{axis = 2 : i64}> : (tensor<1x2x8x4xf32>, tensor<1xi64>, tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32>
