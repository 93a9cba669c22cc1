// Round trip of the dynamic quantization ops (nn.dynamic_range, nn.dynamic_scale,
// nn.dynamic_zero_point, nn.dynamic_quantize, nn.matmul_integer, nn.conv_integer, nn.cast), in
// the pretty and the generic form.
// RUN: nnlayout-opt %s | filecheck %s
// RUN: nnlayout-opt %s --print-op-generic | nnlayout-opt | filecheck %s

func.func @dynamic(%x: tensor<4x8xf32>, %w: tensor<8x3xi8>, %i: tensor<1x8x5x5xf32>, %k: tensor<2x8x3x3xui8>) -> tensor<4x3xf32> {
  %s = nn.dynamic_scale %x : tensor<4x8xf32> -> tensor<f32>
  %z = nn.dynamic_zero_point %x : tensor<4x8xf32> -> tensor<ui8>
  %q = nn.dynamic_quantize %x, %s, %z : (tensor<4x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x8xui8>
  %p = nn.matmul_integer %q, %w zero_point %z {b_zero_point = dense<[1, 0, -2]> : tensor<3xi8>} : (tensor<4x8xui8>, tensor<8x3xi8>, tensor<ui8>) -> tensor<4x3xi32>
  %n = nn.matmul_integer %q, %w : (tensor<4x8xui8>, tensor<8x3xi8>) -> tensor<4x3xi32>
  %f = nn.cast %p : tensor<4x3xi32> -> tensor<4x3xf32>
  %is = nn.dynamic_scale %i : tensor<1x8x5x5xf32> -> tensor<f32>
  %iz = nn.dynamic_zero_point %i : tensor<1x8x5x5xf32> -> tensor<ui8>
  %iq = nn.dynamic_quantize %i, %is, %iz : (tensor<1x8x5x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x8x5x5xui8>
  %c = nn.conv_integer %iq, %k zero_point %iz strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {w_zero_point = dense<128> : tensor<ui8>} : (tensor<1x8x5x5xui8>, tensor<2x8x3x3xui8>, tensor<ui8>) -> tensor<1x2x3x3xi32>
  %r = nn.dynamic_range %x : tensor<4x8xf32> -> tensor<2xf32>
  %rs = nn.dynamic_scale %r : tensor<2xf32> -> tensor<f32>
  func.return %f : tensor<4x3xf32>
}
// CHECK-LABEL: func.func @dynamic
// CHECK-NEXT: %s = nn.dynamic_scale %x : tensor<4x8xf32> -> tensor<f32>
// CHECK-NEXT: %z = nn.dynamic_zero_point %x : tensor<4x8xf32> -> tensor<ui8>
// CHECK-NEXT: %q = nn.dynamic_quantize %x, %s, %z : (tensor<4x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x8xui8>
// CHECK-NEXT: %p = nn.matmul_integer %q, %w zero_point %z {b_zero_point = dense<[1, 0, -2]> : tensor<3xi8>} : (tensor<4x8xui8>, tensor<8x3xi8>, tensor<ui8>) -> tensor<4x3xi32>
// CHECK-NEXT: %n = nn.matmul_integer %q, %w : (tensor<4x8xui8>, tensor<8x3xi8>) -> tensor<4x3xi32>
// CHECK-NEXT: %f = nn.cast %p : tensor<4x3xi32> -> tensor<4x3xf32>
// CHECK:      %c = nn.conv_integer %iq, %k zero_point %iz strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {w_zero_point = dense<128> : tensor<ui8>} : (tensor<1x8x5x5xui8>, tensor<2x8x3x3xui8>, tensor<ui8>) -> tensor<1x2x3x3xi32>
// CHECK-NEXT: %r = nn.dynamic_range %x : tensor<4x8xf32> -> tensor<2xf32>
// CHECK-NEXT: %rs = nn.dynamic_scale %r : tensor<2xf32> -> tensor<f32>

func.func @to_float(%q: tensor<3x1x8xui8>, %w: tensor<8x4xi8>, %s: tensor<f32>, %c: tensor<4xf32>, %z: tensor<ui8>) -> (tensor<3x1x4xf32>, tensor<3x1x4xf32>) {
  %y = nn.matmul_integer_to_float %q, %w scale %s zero_point %z {b_zero_point = dense<3> : tensor<i8>} : (tensor<3x1x8xui8>, tensor<8x4xi8>, tensor<f32>, tensor<ui8>) -> tensor<3x1x4xf32>
  %y2 = nn.matmul_integer_to_float %q, %w scale %c : (tensor<3x1x8xui8>, tensor<8x4xi8>, tensor<4xf32>) -> tensor<3x1x4xf32>
  %y3 = nn.matmul_integer_to_float %q, %w scale %s zero_point %z bias(%c : tensor<4xf32>) : (tensor<3x1x8xui8>, tensor<8x4xi8>, tensor<f32>, tensor<ui8>) -> tensor<3x1x4xf32>
  %y4 = nn.matmul_integer_to_float %q, %w scale %s bias(%c : tensor<4xf32>) : (tensor<3x1x8xui8>, tensor<8x4xi8>, tensor<f32>) -> tensor<3x1x4xf32>
  func.return %y, %y2 : tensor<3x1x4xf32>, tensor<3x1x4xf32>
}
// CHECK-LABEL: func.func @to_float
// CHECK-NEXT: %y = nn.matmul_integer_to_float %q, %w scale %s zero_point %z {b_zero_point = dense<3> : tensor<i8>} : (tensor<3x1x8xui8>, tensor<8x4xi8>, tensor<f32>, tensor<ui8>) -> tensor<3x1x4xf32>
// CHECK-NEXT: %y2 = nn.matmul_integer_to_float %q, %w scale %c : (tensor<3x1x8xui8>, tensor<8x4xi8>, tensor<4xf32>) -> tensor<3x1x4xf32>
// CHECK-NEXT: %y3 = nn.matmul_integer_to_float %q, %w scale %s zero_point %z bias(%c : tensor<4xf32>) : (tensor<3x1x8xui8>, tensor<8x4xi8>, tensor<f32>, tensor<ui8>) -> tensor<3x1x4xf32>
// CHECK-NEXT: %y4 = nn.matmul_integer_to_float %q, %w scale %s bias(%c : tensor<4xf32>) : (tensor<3x1x8xui8>, tensor<8x4xi8>, tensor<f32>) -> tensor<3x1x4xf32>
