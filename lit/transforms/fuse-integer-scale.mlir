// fuse-integer-scale: dynamic quantization's MatMulInteger -> Cast -> Mul becomes one
// nn.matmul_integer_to_float, which takes the bias Add after it; anything else about the ops
// leaves them as they are.
// RUN: nnlayout-opt %s --split-input-file -p fuse-integer-scale | filecheck %s
// RUN: nnlayout-opt %s --split-input-file -p 'default-pipeline{target=avx2}' | filecheck %s --check-prefix=PIPE

// The scale on either side, per tensor or per column; a's zero point and b's carried over.
func.func @fused(%q: tensor<3x1x8xui8>, %z: tensor<ui8>, %s: tensor<f32>, %cs: tensor<4xf32>) -> (tensor<3x1x4xf32>, tensor<3x1x4xf32>) {
  %w = nn.constant dense<[[1, -2, 3, 4], [5, 6, -7, 8], [1, 1, 1, 1], [0, 2, 0, 2], [3, 3, -3, 3], [9, 8, 7, 6], [-1, -1, -1, -1], [2, 4, 6, 8]]> : tensor<8x4xi8>
  %p = nn.matmul_integer %q, %w zero_point %z {b_zero_point = dense<3> : tensor<i8>} : (tensor<3x1x8xui8>, tensor<8x4xi8>, tensor<ui8>) -> tensor<3x1x4xi32>
  %c = nn.cast %p : tensor<3x1x4xi32> -> tensor<3x1x4xf32>
  %y = nn.mul %c, %s : (tensor<3x1x4xf32>, tensor<f32>) -> tensor<3x1x4xf32>
  %p2 = nn.matmul_integer %q, %w : (tensor<3x1x8xui8>, tensor<8x4xi8>) -> tensor<3x1x4xi32>
  %c2 = nn.cast %p2 : tensor<3x1x4xi32> -> tensor<3x1x4xf32>
  %y2 = nn.mul %cs, %c2 : (tensor<4xf32>, tensor<3x1x4xf32>) -> tensor<3x1x4xf32>
  func.return %y, %y2 : tensor<3x1x4xf32>, tensor<3x1x4xf32>
}
// CHECK-LABEL: func.func @fused
// CHECK:      %y = nn.matmul_integer_to_float %q, %w scale %s zero_point %z {b_zero_point = dense<3> : tensor<i8>} : (tensor<3x1x8xui8>, tensor<8x4xi8>, tensor<f32>, tensor<ui8>) -> tensor<3x1x4xf32>
// CHECK-NEXT: %y2 = nn.matmul_integer_to_float %q, %w scale %cs : (tensor<3x1x8xui8>, tensor<8x4xi8>, tensor<4xf32>) -> tensor<3x1x4xf32>
// CHECK-NEXT: func.return %y, %y2
// PIPE-LABEL: func.func @fused
// PIPE-COUNT-2: nn.matmul_integer_to_float {{.*}}#nn.kernel<"matmul_integer_to_float_ref"
// PIPE-NOT:   nn.cast

// -----

// Not fused: the cast read twice; a scale of another shape than a scalar or a column's; the
// product read twice; a kernel chosen already.
func.func @unfused(%q: tensor<2x8xui8>, %s: tensor<1x4xf32>, %t: tensor<f32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xi32>, tensor<2x4xf32>) {
  %w = nn.constant dense<1> : tensor<8x4xi8>
  %p = nn.matmul_integer %q, %w : (tensor<2x8xui8>, tensor<8x4xi8>) -> tensor<2x4xi32>
  %c = nn.cast %p : tensor<2x4xi32> -> tensor<2x4xf32>
  %y = nn.mul %c, %t : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %p2 = nn.matmul_integer %q, %w : (tensor<2x8xui8>, tensor<8x4xi8>) -> tensor<2x4xi32>
  %c2 = nn.cast %p2 : tensor<2x4xi32> -> tensor<2x4xf32>
  %y2 = nn.mul %c2, %s : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %p3 = nn.matmul_integer %q, %w : (tensor<2x8xui8>, tensor<8x4xi8>) -> tensor<2x4xi32>
  %c3 = nn.cast %p3 : tensor<2x4xi32> -> tensor<2x4xf32>
  %y3 = nn.mul %c3, %t : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %p4 = nn.matmul_integer %q, %w : (tensor<2x8xui8>, tensor<8x4xi8>) -> tensor<2x4xi32>
  %c4 = nn.cast %p4 : tensor<2x4xi32> -> tensor<2x4xf32>
  %y4 = nn.mul %c4, %t {kernel = #nn.kernel<"mul_ref", operands = ["", ""], results = [""]>} : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  func.return %y, %c, %y2, %y4, %p3, %y3 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xi32>, tensor<2x4xf32>
}
// CHECK-LABEL: func.func @unfused
// CHECK-NOT:  nn.matmul_integer_to_float
// CHECK:      func.return
// PIPE-LABEL: func.func @unfused

// -----

// The bias add after it (on either side), one f32 value per column: the product's bias.
func.func @bias(%q: tensor<3x8xui8>, %z: tensor<ui8>, %s: tensor<f32>, %b: tensor<4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {
  %w = nn.constant dense<1> : tensor<8x4xi8>
  %p = nn.matmul_integer %q, %w zero_point %z : (tensor<3x8xui8>, tensor<8x4xi8>, tensor<ui8>) -> tensor<3x4xi32>
  %c = nn.cast %p : tensor<3x4xi32> -> tensor<3x4xf32>
  %m = nn.mul %c, %s : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  %y = nn.add %m, %b : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %p2 = nn.matmul_integer %q, %w : (tensor<3x8xui8>, tensor<8x4xi8>) -> tensor<3x4xi32>
  %c2 = nn.cast %p2 : tensor<3x4xi32> -> tensor<3x4xf32>
  %m2 = nn.mul %s, %c2 : (tensor<f32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %y2 = nn.add %b, %m2 : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %y, %y2 : tensor<3x4xf32>, tensor<3x4xf32>
}
// CHECK-LABEL: func.func @bias
// CHECK:      %y = nn.matmul_integer_to_float %q, %w scale %s zero_point %z bias(%b : tensor<4xf32>) : (tensor<3x8xui8>, tensor<8x4xi8>, tensor<f32>, tensor<ui8>) -> tensor<3x4xf32>
// CHECK-NEXT: %y2 = nn.matmul_integer_to_float %q, %w scale %s bias(%b : tensor<4xf32>) : (tensor<3x8xui8>, tensor<8x4xi8>, tensor<f32>) -> tensor<3x4xf32>
// CHECK-NEXT: func.return %y, %y2
// PIPE-LABEL: func.func @bias
// PIPE-COUNT-2: nn.matmul_integer_to_float {{.*}} bias({{.*}}#nn.kernel<"matmul_integer_to_float_ref"
// PIPE-NOT:   nn.add

// -----

// No bias taken: a row of another shape; the scaled product read twice; a kernel chosen.
func.func @no_bias(%q: tensor<3x8xui8>, %s: tensor<f32>, %b: tensor<3x1xf32>, %v: tensor<4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %w = nn.constant dense<1> : tensor<8x4xi8>
  %y = nn.matmul_integer_to_float %q, %w scale %s : (tensor<3x8xui8>, tensor<8x4xi8>, tensor<f32>) -> tensor<3x4xf32>
  %a = nn.add %y, %b : (tensor<3x4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>
  %y2 = nn.matmul_integer_to_float %q, %w scale %s : (tensor<3x8xui8>, tensor<8x4xi8>, tensor<f32>) -> tensor<3x4xf32>
  %a2 = nn.add %y2, %v : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %y3 = nn.matmul_integer_to_float %q, %w scale %s : (tensor<3x8xui8>, tensor<8x4xi8>, tensor<f32>) -> tensor<3x4xf32>
  %a3 = nn.add %y3, %v {kernel = #nn.kernel<"add_ref", operands = ["", ""], results = [""]>} : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  func.return %a, %a2, %y2, %a3 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}
// CHECK-LABEL: func.func @no_bias
// CHECK-NOT:  bias(
// CHECK:      func.return
// PIPE-LABEL: func.func @no_bias
// PIPE-COUNT-3: nn.add
