// Verifier messages of the dynamic quantization ops: mixed and wrong types, non-scalar
// run-time parameters, wrong constant zero points, shapes.
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics

func.func @scale_of_integers(%x: tensor<4xui8>) {
  // expected-error @+1 {{nn.dynamic_scale: the input must be f32, got ui8}}
  %0 = nn.dynamic_scale %x : tensor<4xui8> -> tensor<f32>
  func.return
}

// -----

func.func @zero_point_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{nn.dynamic_zero_point: the result must be ui8, got i8}}
  %0 = nn.dynamic_zero_point %x : tensor<4xf32> -> tensor<i8>
  func.return
}

// -----

func.func @scale_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{nn.dynamic_scale: result shape [1] does not match the inferred shape []}}
  %0 = nn.dynamic_scale %x : tensor<4xf32> -> tensor<1xf32>
  func.return
}

// -----

func.func @range_of_integers(%x: tensor<4xi8>) {
  // expected-error @+1 {{nn.dynamic_range: the input must be f32, got i8}}
  %0 = nn.dynamic_range %x : tensor<4xi8> -> tensor<2xf32>
  func.return
}

// -----

func.func @range_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{nn.dynamic_range: result shape [] does not match the inferred shape [2]}}
  %0 = nn.dynamic_range %x : tensor<4xf32> -> tensor<f32>
  func.return
}

// -----

func.func @quantize_vector_scale(%x: tensor<4xf32>, %s: tensor<4xf32>, %z: tensor<ui8>) {
  // expected-error @+1 {{nn.dynamic_quantize: the scale must be a scalar (rank 0), got shape [4]}}
  %0 = nn.dynamic_quantize %x, %s, %z : (tensor<4xf32>, tensor<4xf32>, tensor<ui8>) -> tensor<4xui8>
  func.return
}

// -----

func.func @quantize_mixed(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<ui8>) {
  // expected-error @+1 {{nn.dynamic_quantize: the result must be ui8, got i8}}
  %0 = nn.dynamic_quantize %x, %s, %z : (tensor<4xf32>, tensor<f32>, tensor<ui8>) -> tensor<4xi8>
  func.return
}

// -----

func.func @matmul_float(%a: tensor<2x3xf32>, %b: tensor<3x4xi8>) {
  // expected-error @+1 {{nn.matmul_integer: a must be ui8 or i8, got f32}}
  %0 = nn.matmul_integer %a, %b : (tensor<2x3xf32>, tensor<3x4xi8>) -> tensor<2x4xi32>
  func.return
}

// -----

func.func @matmul_result(%a: tensor<2x3xui8>, %b: tensor<3x4xi8>) {
  // expected-error @+1 {{nn.matmul_integer: the result must be i32, got f32}}
  %0 = nn.matmul_integer %a, %b : (tensor<2x3xui8>, tensor<3x4xi8>) -> tensor<2x4xf32>
  func.return
}

// -----

func.func @matmul_zero_point_type(%a: tensor<2x3xui8>, %b: tensor<3x4xi8>, %z: tensor<i8>) {
  // expected-error @+1 {{nn.matmul_integer: a's zero point must be ui8, got i8}}
  %0 = nn.matmul_integer %a, %b zero_point %z : (tensor<2x3xui8>, tensor<3x4xi8>, tensor<i8>) -> tensor<2x4xi32>
  func.return
}

// -----

func.func @matmul_per_row_zero_point(%a: tensor<2x3xui8>, %b: tensor<3x4xi8>, %z: tensor<2xui8>) {
  // expected-error @+1 {{nn.matmul_integer: a's zero point must be a scalar (rank 0), got shape [2]}}
  %0 = nn.matmul_integer %a, %b zero_point %z : (tensor<2x3xui8>, tensor<3x4xi8>, tensor<2xui8>) -> tensor<2x4xi32>
  func.return
}

// -----

func.func @matmul_b_zero_point(%a: tensor<2x3xui8>, %b: tensor<3x4xi8>) {
  // expected-error @+1 {{nn.matmul_integer: b_zero_point must be a scalar or 4 values of i8, got tensor<3xi8>}}
  %0 = nn.matmul_integer %a, %b {b_zero_point = dense<[1, 2, 3]> : tensor<3xi8>} : (tensor<2x3xui8>, tensor<3x4xi8>) -> tensor<2x4xi32>
  func.return
}

// -----

func.func @matmul_shape(%a: tensor<2x3xui8>, %b: tensor<5x4xi8>) {
  // expected-error @+1 {{contraction sizes differ: lhs [2, 3] has K=3, rhs [5, 4] has K=5}}
  %0 = nn.matmul_integer %a, %b : (tensor<2x3xui8>, tensor<5x4xi8>) -> tensor<2x4xi32>
  func.return
}

// -----

func.func @conv_w_zero_point(%x: tensor<1x2x3x3xui8>, %w: tensor<4x2x1x1xi8>) {
  // expected-error @+1 {{nn.conv_integer: w_zero_point must be a scalar or 4 values of i8, got tensor<ui8>}}
  %0 = nn.conv_integer %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {w_zero_point = dense<1> : tensor<ui8>} : (tensor<1x2x3x3xui8>, tensor<4x2x1x1xi8>) -> tensor<1x4x3x3xi32>
  func.return
}

// -----

func.func @conv_shape(%x: tensor<1x2x3x3xui8>, %w: tensor<4x2x3x3xi8>) {
  // expected-error @+1 {{nn.conv_integer: result shape [1, 4, 3, 3] does not match the inferred shape [1, 4, 1, 1]}}
  %0 = nn.conv_integer %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x2x3x3xui8>, tensor<4x2x3x3xi8>) -> tensor<1x4x3x3xi32>
  func.return
}

// -----

func.func @cast_float_to_integer(%x: tensor<4xf32>) {
  // expected-error @+1 {{nn.cast: the result has element type i8; a float converts to another float}}
  %0 = nn.cast %x : tensor<4xf32> -> tensor<4xi8>
  func.return
}

// -----

func.func @cast_integer_to_integer(%x: tensor<4xi32>) {
  // expected-error @+1 {{nn.cast: the result of i32 must be f32, i1, i32 or i64, got i8}}
  %0 = nn.cast %x : tensor<4xi32> -> tensor<4xi8>
  func.return
}

// -----

func.func @to_float_scale_per_row(%q: tensor<8xui8>, %w: tensor<8xi8>, %s: tensor<8xf32>) -> tensor<f32> {
  // expected-error @+1 {{nn.matmul_integer_to_float: the scale must be a scalar (b of rank 1), got shape [8]}}
  %y = nn.matmul_integer_to_float %q, %w scale %s : (tensor<8xui8>, tensor<8xi8>, tensor<8xf32>) -> tensor<f32>
  func.return %y : tensor<f32>
}

// -----

func.func @to_float_scale_of_other_columns(%q: tensor<2x8xui8>, %w: tensor<8x4xi8>, %s: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{nn.matmul_integer_to_float: the scale must be a scalar or 4 values (one per column) (b of rank 2), got shape [3]}}
  %y = nn.matmul_integer_to_float %q, %w scale %s : (tensor<2x8xui8>, tensor<8x4xi8>, tensor<3xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

func.func @to_float_integer_result(%q: tensor<2x8xui8>, %w: tensor<8x4xi8>, %s: tensor<f32>) -> tensor<2x4xi32> {
  // expected-error @+1 {{nn.matmul_integer_to_float: the result must be f32, got i32}}
  %y = nn.matmul_integer_to_float %q, %w scale %s : (tensor<2x8xui8>, tensor<8x4xi8>, tensor<f32>) -> tensor<2x4xi32>
  func.return %y : tensor<2x4xi32>
}

// -----

func.func @bias_shape(%q: tensor<2x8xui8>, %w: tensor<8x4xi8>, %s: tensor<f32>, %b: tensor<1x4xf32>) {
  // expected-error @+1 {{nn.matmul_integer_to_float: the bias must be 4 values (one per column), got shape [1, 4]}}
  %0 = nn.matmul_integer_to_float %q, %w scale %s bias(%b : tensor<1x4xf32>) : (tensor<2x8xui8>, tensor<8x4xi8>, tensor<f32>) -> tensor<2x4xf32>
  func.return
}

// -----

func.func @bias_type(%q: tensor<2x8xui8>, %w: tensor<8x4xi8>, %s: tensor<f32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{nn.matmul_integer_to_float: the bias must be f32, got i32}}
  %0 = nn.matmul_integer_to_float %q, %w scale %s bias(%b : tensor<4xi32>) : (tensor<2x8xui8>, tensor<8x4xi8>, tensor<f32>) -> tensor<2x4xf32>
  func.return
}

// -----

func.func @bias_of_a_vector_product(%q: tensor<3x8xui8>, %w: tensor<8xi8>, %s: tensor<f32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{nn.matmul_integer_to_float: a bias needs b of rank 2 or more (columns), got b of rank 1}}
  %0 = nn.matmul_integer_to_float %q, %w scale %s bias(%b : tensor<8xf32>) : (tensor<3x8xui8>, tensor<8xi8>, tensor<f32>) -> tensor<3xf32>
  func.return
}
