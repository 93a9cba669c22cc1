// Verifier messages of nn.compare, nn.logical, nn.where and of i1 data elsewhere (a mask moves through
// reshape, flatten, transpose, slice and expand, and casts to f32; other ops refuse it).
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics

func.func @unknown_predicate(%a: tensor<4xf32>) {
  // expected-error @+1 {{nn.compare: unknown predicate 'neq'; expected one of eq, lt, le, gt, ge, ne}}
  %0 = nn.compare "neq" %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  func.return
}

// -----

func.func @compare_quantized(%q: tensor<4xui8>) {
  // expected-error @+1 {{nn.compare: compares two floats or two i64 (indices) of one type, got ui8 and ui8; quantized data needs nn.dequantize first}}
  %0 = nn.compare "gt" %q, %q : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  func.return
}

// -----

func.func @compare_not_a_mask(%a: tensor<4xf32>) {
  // expected-error @+1 {{nn.compare: the result is an i1 mask, got element type f32}}
  %0 = nn.compare "gt" %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @compare_no_broadcast(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{nn.compare: shapes [2, 3], [4, 3] do not broadcast (dimension 0 of the broadcast result has sizes [2, 4])}}
  %0 = nn.compare "lt" %a, %b : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
  func.return
}

// -----

func.func @where_float_mask(%a: tensor<4xf32>) {
  // expected-error @+1 {{nn.where: the mask (operand 0) is an i1 tensor, got element type f32}}
  %0 = nn.where %a, %a, %a : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @where_mixed(%m: tensor<4xi1>, %a: tensor<4xf32>, %q: tensor<4xui8>) {
  // expected-error @+1 {{nn.where: x, y and the result have one element type, a float or i1, ui8, i8, i32, i64; got f32, ui8 and f32}}
  %0 = nn.where %m, %a, %q : (tensor<4xi1>, tensor<4xf32>, tensor<4xui8>) -> tensor<4xf32>
  func.return
}

// -----

func.func @where_shape(%m: tensor<3x1xi1>, %a: tensor<4xf32>) {
  // expected-error @+1 {{nn.where: result shape [4] does not match the inferred shape [3, 4]}}
  %0 = nn.where %m, %a, %a : (tensor<3x1xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @mask_added(%m: tensor<4xi1>) {
  // expected-error @+1 {{nn.add: does not take i1 (mask) or i64 (index) data; masks are made by nn.compare and read by nn.where, indices are read by nn.gather and computed on by nn.add, nn.sub, nn.mul, nn.max, nn.min and nn.cumsum, and nn.cast converts either}}
  %0 = nn.add %m, %m : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

func.func @masks_pooled(%m: tensor<1x1x4x4xi1>) {
  // expected-error @+1 {{nn.global_avg_pool: does not take i1 (mask) or i64 (index) data; masks are made by nn.compare and read by nn.where, indices are read by nn.gather and computed on by nn.add, nn.sub, nn.mul, nn.max, nn.min and nn.cumsum, and nn.cast converts either}}
  %0 = nn.global_avg_pool %m : tensor<1x1x4x4xi1> -> tensor<1x1x1x1xi1>
  func.return
}

// -----

func.func @wide_mask(%m: tensor<4xi2>) {
  // expected-error @+1 {{has element type i2; nn ops compute on bf16, f16, f32 or f64 and hold quantized data as ui8 or i8 (i32 for biases), masks as i1 and indices as i64}}
  %0 = nn.where %m, %m, %m : (tensor<4xi2>, tensor<4xi2>, tensor<4xi2>) -> tensor<4xi2>
  func.return
}

// -----

func.func @unknown_logical(%a: tensor<4xi1>) {
  // expected-error @+1 {{nn.logical: unknown operation 'nand'; expected one of and, or, xor}}
  %0 = nn.logical "nand" %a, %a : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

func.func @logical_of_floats(%a: tensor<4xf32>, %m: tensor<4xi1>) {
  // expected-error @+1 {{nn.logical: combines two i1 masks into one, got f32, i1 and i1}}
  %0 = nn.logical "and" %a, %m : (tensor<4xf32>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

func.func @logical_shapes(%a: tensor<4xi1>, %b: tensor<3xi1>) {
  // expected-error @+1 {{nn.logical: shapes [4], [3] do not broadcast}}
  %0 = nn.logical "or" %a, %b : (tensor<4xi1>, tensor<3xi1>) -> tensor<4xi1>
  func.return
}

// -----

func.func @mask_to_mask(%m: tensor<4xi1>) {
  // expected-error @+1 {{nn.cast: the input is already a mask (i1)}}
  %0 = nn.cast %m : tensor<4xi1> -> tensor<4xi1>
  func.return
}
