// Verifier messages of nn.slice, nn.pad, nn.resize, nn.channel_shuffle, nn.expand, nn.gather (constant indices in range), nn.scatter and nn.grid_sample, and of i64 data elsewhere.
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics

func.func @slice_out_of_range(%x: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{nn.slice: axis 1 of size 8 is read from index 6 to 9 (start 6, size 4, step 1); both must lie in [0, 8)}}
  %0 = nn.slice %x starts [0, 6, 0, 0] sizes [1, 4, 4, 4] steps [1, 1, 1, 1] : tensor<1x8x4x4xf32> -> tensor<1x4x4x4xf32>
  func.return
}

// -----

func.func @slice_negative_step_past_start(%x: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{nn.slice: axis 2 of size 4 is read from index 1 to -1}}
  %0 = nn.slice %x starts [0, 0, 1, 0] sizes [1, 8, 3, 4] steps [1, 1, -1, 1] : tensor<1x8x4x4xf32> -> tensor<1x8x3x4xf32>
  func.return
}

// -----

func.func @slice_zero_step(%x: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{nn.slice: steps must be non-zero, got [1, 0, 1, 1]}}
  %0 = nn.slice %x starts [0, 0, 0, 0] sizes [1, 8, 4, 4] steps [1, 0, 1, 1] : tensor<1x8x4x4xf32> -> tensor<1x8x4x4xf32>
  func.return
}

// -----

func.func @slice_wrong_result(%x: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{nn.slice: result shape [1, 8, 4, 4] does not match the inferred shape [1, 4, 4, 4]}}
  %0 = nn.slice %x starts [0, 0, 0, 0] sizes [1, 4, 4, 4] steps [1, 1, 1, 1] : tensor<1x8x4x4xf32> -> tensor<1x8x4x4xf32>
  func.return
}

// -----

func.func @pad_mode(%x: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{nn.pad: mode must be one of constant, reflect, edge, got wrap}}
  %0 = nn.pad %x pads [0, 0, 1, 1, 0, 0, 1, 1] mode "wrap" value 0.0 : tensor<1x8x4x4xf32> -> tensor<1x8x6x6xf32>
  func.return
}

// -----

func.func @pad_reflect_too_wide(%x: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{nn.pad: reflect pads [0, 0, 4, 0, 0, 0, 0, 0] must be smaller than the size 4 of axis 2}}
  %0 = nn.pad %x pads [0, 0, 4, 0, 0, 0, 0, 0] mode "reflect" value 0.0 : tensor<1x8x4x4xf32> -> tensor<1x8x8x4xf32>
  func.return
}

// -----

func.func @pad_negative(%x: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{nn.pad: pads must be non-negative, got [0, 0, -1, 0, 0, 0, 0, 0]}}
  %0 = nn.pad %x pads [0, 0, -1, 0, 0, 0, 0, 0] mode "edge" value 0.0 : tensor<1x8x4x4xf32> -> tensor<1x8x3x4xf32>
  func.return
}

// -----

func.func @resize_channels(%x: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{nn.resize: result [1, 16, 8, 8] must keep the input's N and C [1, 8]; only the spatial axes are resized}}
  %0 = nn.resize %x mode "nearest" coordinates "asymmetric" nearest "floor" scales [2.0, 2.0] : tensor<1x8x4x4xf32> -> tensor<1x16x8x8xf32>
  func.return
}

// -----

func.func @resize_mode(%x: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{nn.resize: mode must be one of nearest, linear, got cubic}}
  %0 = nn.resize %x mode "cubic" coordinates "asymmetric" nearest "floor" scales [2.0, 2.0] : tensor<1x8x4x4xf32> -> tensor<1x8x8x8xf32>
  func.return
}

// -----

func.func @resize_scale(%x: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{nn.resize: scales must be positive, got [2.0, 0.0]}}
  %0 = nn.resize %x mode "nearest" coordinates "asymmetric" nearest "floor" scales [2.0, 0.0] : tensor<1x8x4x4xf32> -> tensor<1x8x8x8xf32>
  func.return
}

// -----

func.func @shuffle_groups(%x: tensor<1x10x4x4xf32>) {
  // expected-error @+1 {{nn.channel_shuffle: groups 4 must be positive and divide the 10 channels}}
  %0 = nn.channel_shuffle %x groups 4 : tensor<1x10x4x4xf32>
  func.return
}

// -----

func.func @expand_shrinks(%x: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{nn.expand: shapes [1, 8, 4, 4], [1, 4, 4, 4] do not broadcast}}
  %0 = nn.expand %x : tensor<1x8x4x4xf32> -> tensor<1x4x4x4xf32>
  func.return
}

// -----

func.func @expand_wrong_result(%x: tensor<3x1xf32>) {
  // expected-error @+1 {{nn.expand: [3, 1] broadcast to [1, 4] gives [3, 4], not the result shape}}
  %0 = nn.expand %x : tensor<3x1xf32> -> tensor<1x4xf32>
  func.return
}

// -----

func.func @gather_float_indices(%t: tensor<50x16xf32>, %ids: tensor<1x6xf32>) {
  // expected-error @+1 {{nn.gather: the indices (operand 1) are i64 or i32, got f32}}
  %0 = nn.gather %t, %ids axis 0 : (tensor<50x16xf32>, tensor<1x6xf32>) -> tensor<1x6x16xf32>
  func.return
}

// -----

func.func @gather_axis_out_of_range(%t: tensor<50x16xf32>, %ids: tensor<1x6xi64>) {
  // expected-error @+1 {{nn.gather: axis 2 is not an axis of the rank-2 data (0 to 1)}}
  %0 = nn.gather %t, %ids axis 2 : (tensor<50x16xf32>, tensor<1x6xi64>) -> tensor<1x6x16xf32>
  func.return
}

// -----

func.func @gather_wrong_result(%t: tensor<50x16xf32>, %ids: tensor<1x6xi64>) {
  // expected-error @+1 {{nn.gather: result shape [6, 16] does not match the inferred shape [1, 6, 16]}}
  %0 = nn.gather %t, %ids axis 0 : (tensor<50x16xf32>, tensor<1x6xi64>) -> tensor<6x16xf32>
  func.return
}

// -----

func.func @gather_changes_the_type(%t: tensor<50x16xf32>, %ids: tensor<1x6xi64>) {
  // expected-error @+1 {{nn.gather: the result has the data's element type, f32; got bf16}}
  %0 = nn.gather %t, %ids axis 0 : (tensor<50x16xf32>, tensor<1x6xi64>) -> tensor<1x6x16xbf16>
  func.return
}

// -----

func.func @division_of_indices(%ids: tensor<1x6xi64>) {
  // expected-error @+1 {{nn.div: does not take i1 (mask) or i64 (index) data; masks are made by nn.compare and read by nn.where, indices are read by nn.gather and computed on by nn.add, nn.sub, nn.mul, nn.max, nn.min and nn.cumsum, and nn.cast converts either}}
  %0 = nn.div %ids, %ids : (tensor<1x6xi64>, tensor<1x6xi64>) -> tensor<1x6xi64>
  func.return
}

// -----

func.func @indices_to_bf16(%ids: tensor<1x6xi64>) {
  // expected-error @+1 {{nn.cast: the result of i64 must be f32, i1, i32 or i64, got bf16}}
  %0 = nn.cast %ids : tensor<1x6xi64> -> tensor<1x6xbf16>
  func.return
}

// -----

func.func @gather_at_a_constant_index_out_of_range(%t: tensor<5x4xf32>) {
  %i = nn.constant dense<[[1, -6]]> : tensor<1x2xi64>
  // expected-error @+1 {{nn.gather: constant index -6 at [0, 1] is out of range for axis 0 of size 5 (-5 to 4)}}
  %y = nn.gather %t, %i axis 0 : (tensor<5x4xf32>, tensor<1x2xi64>) -> tensor<1x2x4xf32>
  func.return
}

// -----

func.func @scatter_matrix_indices(%c: tensor<8x4xf32>, %at: tensor<1x1xi64>, %u: tensor<1x4xf32>) {
  // expected-error @+1 {{nn.scatter: the indices are a vector, got shape [1, 1]}}
  %0 = nn.scatter %c, %at, %u axis 0 : (tensor<8x4xf32>, tensor<1x1xi64>, tensor<1x4xf32>) -> tensor<8x4xf32>
  func.return
}

// -----

func.func @scatter_updates_shape(%c: tensor<8x4xf32>, %at: tensor<2xi64>, %u: tensor<1x4xf32>) {
  // expected-error @+1 {{nn.scatter: updates of shape [1, 4] for data of shape [8, 4] at 2 indices along axis 0; expected [2, 4]}}
  %0 = nn.scatter %c, %at, %u axis 0 : (tensor<8x4xf32>, tensor<2xi64>, tensor<1x4xf32>) -> tensor<8x4xf32>
  func.return
}

// -----

func.func @scatter_float_indices(%c: tensor<8x4xf32>, %at: tensor<1xf32>, %u: tensor<1x4xf32>) {
  // expected-error @+1 {{nn.scatter: the indices (operand 1) are i64 or i32, got f32}}
  %0 = nn.scatter %c, %at, %u axis 0 : (tensor<8x4xf32>, tensor<1xf32>, tensor<1x4xf32>) -> tensor<8x4xf32>
  func.return
}

// -----

func.func @scatter_mixed(%c: tensor<8x4xf32>, %at: tensor<1xi64>, %u: tensor<1x4xui8>) {
  // expected-error @+1 {{nn.scatter: the updates have the data's element type, f32; got ui8}}
  %0 = nn.scatter %c, %at, %u axis 0 : (tensor<8x4xf32>, tensor<1xi64>, tensor<1x4xui8>) -> tensor<8x4xf32>
  func.return
}

// -----

func.func @scatter_axis(%c: tensor<8x4xf32>, %at: tensor<1xi64>, %u: tensor<1x4xf32>) {
  // expected-error @+1 {{nn.scatter: axis 2 is not an axis of the rank-2 data (0 to 1)}}
  %0 = nn.scatter %c, %at, %u axis 2 : (tensor<8x4xf32>, tensor<1xi64>, tensor<1x4xf32>) -> tensor<8x4xf32>
  func.return
}

// -----

func.func @scatter_unknown_reduction(%c: tensor<8xf32>, %at: tensor<1xi64>, %u: tensor<1xf32>) {
  // expected-error @+1 {{nn.scatter: unknown reduction 'sum' (add, mul, max or min)}}
  %0 = nn.scatter %c, %at, %u axis 0 reduction "sum" : (tensor<8xf32>, tensor<1xi64>, tensor<1xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @scatter_reduction_of_quantized(%c: tensor<8xui8>, %at: tensor<1xi64>, %u: tensor<1xui8>) {
  // expected-error @+1 {{nn.scatter: reduction 'add' computes on floats, i32 or i64, got ui8 data}}
  %0 = nn.scatter %c, %at, %u axis 0 reduction "add" : (tensor<8xui8>, tensor<1xi64>, tensor<1xui8>) -> tensor<8xui8>
  func.return
}

// -----

func.func @scatter_constant_out_of_range(%c: tensor<8xf32>, %u: tensor<2xf32>) {
  %at = nn.constant dense<[1, -9]> : tensor<2xi64>
  // expected-error @+1 {{nn.scatter: constant index -9 at [1] is out of range for axis 0 of size 8 (-8 to 7)}}
  %0 = nn.scatter %c, %at, %u axis 0 : (tensor<8xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @grid_sample_grid_of_three_coordinates(%x: tensor<1x5x8x9xf32>, %g: tensor<1x4x6x3xf32>) {
  // expected-error @+1 {{nn.grid_sample: grid [1, 4, 6, 3] must be [N, Ho, Wo, 2] with the input's N = 1}}
  %0 = nn.grid_sample %x, %g mode "linear" padding "zeros" : (tensor<1x5x8x9xf32>, tensor<1x4x6x3xf32>) -> tensor<1x5x4x6xf32>
  func.return
}

// -----

func.func @grid_sample_unknown_padding(%x: tensor<1x5x8x9xf32>, %g: tensor<1x4x6x2xf32>) {
  // expected-error @+1 {{nn.grid_sample: padding must be one of zeros, border, reflection, got wrap}}
  %0 = nn.grid_sample %x, %g mode "linear" padding "wrap" : (tensor<1x5x8x9xf32>, tensor<1x4x6x2xf32>) -> tensor<1x5x4x6xf32>
  func.return
}
