// Verifier messages of nn.reduce, nn.layer_norm, nn.lrn and nn.cumsum, and of integer arithmetic.
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics

func.func @reduce_kind(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{nn.reduce: unknown kind 'average'; expected one of sum, mean, max, min, prod, l1, l2, sum_square, log_sum}}
  %0 = nn.reduce %x kind "average" axes [1] : tensor<2x3xf32> -> tensor<2x1xf32>
  func.return
}

// -----

func.func @reduce_no_axes(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{nn.reduce: axes must not be empty}}
  %0 = nn.reduce %x kind "sum" axes [] : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @reduce_unsorted_axes(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{nn.reduce: axes must be strictly increasing, got [2, 1]}}
  %0 = nn.reduce %x kind "sum" axes [2, 1] : tensor<2x3x4xf32> -> tensor<2x1x1xf32>
  func.return
}

// -----

func.func @reduce_axis_out_of_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{nn.reduce: axes [0, 2] out of range for rank 2 (0 <= axis < 2)}}
  %0 = nn.reduce %x kind "max" axes [0, 2] : tensor<2x3xf32> -> tensor<1x3xf32>
  func.return
}

// -----

func.func @reduce_dropped_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{nn.reduce: result shape [2] does not match the inferred shape [2, 1]}}
  %0 = nn.reduce %x kind "mean" axes [1] : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @layer_norm_scale(%x: tensor<2x3x4xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{nn.layer_norm: scale of shape [3] does not broadcast to the normalised axes [4]}}
  %0 = nn.layer_norm %x, %s axis -1 epsilon 1.0e-5 : (tensor<2x3x4xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  func.return
}

// -----

func.func @layer_norm_axis(%x: tensor<2x3xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{nn.layer_norm: axis 2 is out of range for rank 2 (expected -2 <= axis < 2)}}
  %0 = nn.layer_norm %x, %s axis 2 epsilon 1.0e-5 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @layer_norm_epsilon(%x: tensor<2x3xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{nn.layer_norm: epsilon must be non-negative, got -1.0}}
  %0 = nn.layer_norm %x, %s axis 1 epsilon -1.0 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @lrn_size(%x: tensor<1x4x2x2xf32>) {
  // expected-error @+1 {{nn.lrn: size must be positive, got 0}}
  %0 = nn.lrn %x size 0 alpha 1.0e-4 beta 0.75 bias 1.0 : tensor<1x4x2x2xf32>
  func.return
}

// -----

func.func @lrn_rank(%x: tensor<4x2xf32>) {
  // expected-error @+1 {{nn.lrn: input must have rank >= 3 (N, C, spatial...), got [4, 2]}}
  %0 = nn.lrn %x size 3 alpha 1.0e-4 beta 0.75 bias 1.0 : tensor<4x2xf32>
  func.return
}

// -----

func.func @cumsum_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{nn.cumsum: axis 2 is out of range for rank 2 (expected -2 <= axis < 2)}}
  %0 = nn.cumsum %x axis 2 : tensor<2x3xf32>
  func.return
}

// -----

func.func @cumsum_of_quantized_data(%x: tensor<2x3xui8>) {
  // expected-error @+1 {{nn.cumsum: computes on floats (bf16, f16, f32, f64), got ui8 data}}
  %0 = nn.cumsum %x axis 1 : tensor<2x3xui8>
  func.return
}

// -----

func.func @cumsum_of_a_mask(%m: tensor<2x3xi1>) {
  // expected-error @+1 {{nn.cumsum: does not take i1 (mask) or i64 (index) data}}
  %0 = nn.cumsum %m axis 1 : tensor<2x3xi1>
  func.return
}

// -----

func.func @integers_of_two_types_added(%a: tensor<3xi32>, %b: tensor<3xi64>) {
  // expected-error @+1 {{nn.add: operand 1 has element type i64, expected i32 like operand 0}}
  %0 = nn.add %a, %b : (tensor<3xi32>, tensor<3xi64>) -> tensor<3xi32>
  func.return
}

// -----

func.func @integer_from_a_float(%x: tensor<3xf32>) {
  // expected-error @+1 {{nn.cast: makes i32 or i64 of a mask (i1) or of the other of i32 and i64 only, got f32 -> i64}}
  %0 = nn.cast %x : tensor<3xf32> -> tensor<3xi64>
  func.return
}

// -----

func.func @integer_to_itself(%x: tensor<3xi32>) {
  // expected-error @+1 {{nn.cast: makes i32 or i64 of a mask (i1) or of the other of i32 and i64 only, got i32 -> i32}}
  %0 = nn.cast %x : tensor<3xi32> -> tensor<3xi32>
  func.return
}
