// Verifier and parser messages of the data-movement ops and constants.
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics

func.func @concat_no_inputs() {
  // expected-error @+1 {{nn.concat: needs at least one input}}
  %0 = nn.concat axis 0 : () -> tensor<2xf32>
  func.return
}

// -----

func.func @concat_mismatch(%a: tensor<1x8x4x4xf32>, %b: tensor<1x8x5x4xf32>) {
  // expected-error @+1 {{nn.concat: input 1 has shape [1, 8, 5, 4], which differs from input 0 [1, 8, 4, 4] outside the concatenation axis 1}}
  %0 = nn.concat %a, %b axis 1 : (tensor<1x8x4x4xf32>, tensor<1x8x5x4xf32>) -> tensor<1x16x4x4xf32>
  func.return
}

// -----

func.func @concat_rank_mismatch(%a: tensor<1x8x4x4xf32>, %b: tensor<8x4x4xf32>) {
  // expected-error @+1 {{nn.concat: input 1 has rank 3 ([8, 4, 4]), but input 0 has rank 4 ([1, 8, 4, 4])}}
  %0 = nn.concat %a, %b axis 1 : (tensor<1x8x4x4xf32>, tensor<8x4x4xf32>) -> tensor<1x16x4x4xf32>
  func.return
}

// -----

func.func @concat_axis(%a: tensor<1x8xf32>) {
  // expected-error @+1 {{nn.concat: axis 2 is out of range for rank 2 (expected -2 <= axis < 2)}}
  %0 = nn.concat %a, %a axis 2 : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x16xf32>
  func.return
}

// -----

func.func @concat_result(%a: tensor<1x8xf32>) {
  // expected-error @+1 {{nn.concat: result shape [2, 8] does not match the inferred shape [1, 16]}}
  %0 = nn.concat %a, %a axis -1 : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

func.func @flatten_axis(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{nn.flatten: axis 4 is out of range for rank 3 (expected -3 <= axis < 4)}}
  %0 = nn.flatten %x axis 4 : tensor<2x3x4xf32> -> tensor<24x1xf32>
  func.return
}

// -----

func.func @flatten_negative_axis(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{nn.flatten: axis -4 is out of range for rank 3 (expected -3 <= axis < 4)}}
  %0 = nn.flatten %x axis -4 : tensor<2x3x4xf32> -> tensor<1x24xf32>
  func.return
}

// -----

func.func @flatten_result(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{nn.flatten: result shape [2, 12] does not match the inferred shape [6, 4]}}
  %0 = nn.flatten %x axis -1 : tensor<2x3x4xf32> -> tensor<2x12xf32>
  func.return
}

// -----

func.func @reshape_count(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{nn.reshape: cannot reshape [2, 3, 4] (24 elements) to [5, 5] (25 elements)}}
  %0 = nn.reshape %x : tensor<2x3x4xf32> -> tensor<5x5xf32>
  func.return
}

// -----

func.func @transpose_perm(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{nn.transpose: perm [0, 1, 1] is not a permutation of 0..2}}
  %0 = nn.transpose %x perm [0, 1, 1] : tensor<2x3x4xf32> -> tensor<2x3x3xf32>
  func.return
}

// -----

func.func @transpose_result(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{nn.transpose: result shape [2, 4, 3] does not match the inferred shape [4, 2, 3]}}
  %0 = nn.transpose %x perm [2, 0, 1] : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  func.return
}

// -----

func.func @constant_neither() {
  // expected-error @+1 {{nn.constant: needs exactly one of an inline dense<...> value or external "name"}}
  %0 = "nn.constant"() : () -> tensor<2xf32>
  func.return
}

// -----

func.func @constant_both() {
  // expected-error @+1 {{nn.constant: needs exactly one of an inline dense<...> value or external "name"}}
  %0 = "nn.constant"() <{value = dense<1.0> : tensor<2xf32>, external = "w"}> : () -> tensor<2xf32>
  func.return
}

// -----

func.func @constant_type() {
  // expected-error @+1 {{nn.constant: value of type tensor<3xf32> does not match the result type tensor<2xf32>}}
  %0 = "nn.constant"() <{value = dense<1.0> : tensor<3xf32>}> : () -> tensor<2xf32>
  func.return
}

// -----

func.func @constant_integer() {
  // expected-error @+1 {{nn.constant: result 0 has element type i16; nn ops compute on bf16, f16, f32 or f64}}
  %0 = nn.constant dense<1> : tensor<2xi16>
  func.return
}

// -----

func.func @constant_not_dense() {
  // expected-error @+1 {{nn.constant: expected dense<...> : tensor<...> or external "name"}}
  %0 = nn.constant 1.0 : f32
  func.return
}

// -----

func.func @constant_external_type() {
  // expected-error @+1 {{nn.constant: expected a tensor type, got f32}}
  %0 = nn.constant external "w" : f32
  func.return
}

// -----

// xDSL finds this after the literal; the error still points at the literal's line.
func.func @constant_literal_shape() {
  // expected-error @+1 {{Shape mismatch in dense literal. Expected [3] shape from the type, but got [2] shape.}}
  %0 = nn.constant dense<[1.0, 2.0]> : tensor<3xf32>
  func.return
}
