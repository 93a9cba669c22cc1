// share-dynamic-range: the scale and the zero point of one activation read its range once,
// from one nn.dynamic_range placed before the first of them; anything else is left as it is.
// RUN: nnlayout-opt %s --split-input-file -p share-dynamic-range | filecheck %s
// RUN: nnlayout-opt %s --split-input-file -p 'default-pipeline{target=avx2}' | filecheck %s --check-prefix=PIPE

// The importer's DynamicQuantizeLinear; the zero point before the scale; two zero points.
func.func @shared(%x: tensor<4x8xf32>, %y: tensor<3xf32>) -> (tensor<4x8xui8>, tensor<ui8>, tensor<f32>, tensor<ui8>) {
  %s = nn.dynamic_scale %x : tensor<4x8xf32> -> tensor<f32>
  %z = nn.dynamic_zero_point %x : tensor<4x8xf32> -> tensor<ui8>
  %q = nn.dynamic_quantize %x, %s, %z : (tensor<4x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x8xui8>
  %yz = nn.dynamic_zero_point %y : tensor<3xf32> -> tensor<ui8>
  %ys = nn.dynamic_scale %y : tensor<3xf32> -> tensor<f32>
  %yz2 = nn.dynamic_zero_point %y : tensor<3xf32> -> tensor<ui8>
  func.return %q, %yz, %ys, %yz2 : tensor<4x8xui8>, tensor<ui8>, tensor<f32>, tensor<ui8>
}
// CHECK-LABEL: func.func @shared
// CHECK-NEXT:  %[[R:.*]] = nn.dynamic_range %x : tensor<4x8xf32> -> tensor<2xf32>
// CHECK-NEXT:  %s = nn.dynamic_scale %[[R]] : tensor<2xf32> -> tensor<f32>
// CHECK-NEXT:  %z = nn.dynamic_zero_point %[[R]] : tensor<2xf32> -> tensor<ui8>
// CHECK-NEXT:  %q = nn.dynamic_quantize %x, %s, %z
// CHECK-NEXT:  %[[YR:.*]] = nn.dynamic_range %y : tensor<3xf32> -> tensor<2xf32>
// CHECK-NEXT:  %yz = nn.dynamic_zero_point %[[YR]]
// CHECK-NEXT:  %ys = nn.dynamic_scale %[[YR]]
// CHECK-NEXT:  %yz2 = nn.dynamic_zero_point %[[YR]]
// CHECK-NEXT:  func.return
// PIPE-LABEL: func.func @shared
// PIPE-COUNT-2: nn.dynamic_range {{.*}}#nn.kernel<"dynamic_range_ref"

// -----

// Left as they are: a scale alone; a zero point alone; a kernel chosen already.
func.func @unshared(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %w: tensor<4x8xf32>) -> (tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) {
  %s = nn.dynamic_scale %x : tensor<4x8xf32> -> tensor<f32>
  %z = nn.dynamic_zero_point %y : tensor<4x8xf32> -> tensor<ui8>
  %ws = nn.dynamic_scale %w {kernel = #nn.kernel<"dynamic_scale_ref", operands = [""], results = [""]>} : tensor<4x8xf32> -> tensor<f32>
  %wz = nn.dynamic_zero_point %w : tensor<4x8xf32> -> tensor<ui8>
  func.return %s, %z, %ws, %wz : tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>
}
// CHECK-LABEL: func.func @unshared
// CHECK-NOT:   nn.dynamic_range
// CHECK:       func.return
