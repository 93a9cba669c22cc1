// Verifier messages of pooling, batch_norm and softmax.
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics

func.func @pool_kernel_length(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{nn.max_pool2d: kernel needs 2 values, got [2, 2, 2]}}
  %0 = nn.max_pool2d %x kernel [2, 2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  func.return
}

// -----

func.func @pool_zero_kernel(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{nn.avg_pool2d: kernel must be positive, got [0, 2]}}
  %0 = nn.avg_pool2d %x kernel [0, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  func.return
}

// -----

func.func @pool_zero_stride(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{nn.max_pool2d: strides must be positive, got [2, 0]}}
  %0 = nn.max_pool2d %x kernel [2, 2] strides [2, 0] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  func.return
}

// -----

func.func @pool_negative_pads(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{nn.max_pool2d: pads must be non-negative, got [0, 0, -1, 0]}}
  %0 = nn.max_pool2d %x kernel [2, 2] strides [2, 2] pads [0, 0, -1, 0] dilations [1, 1] : tensor<1x4x8x8xf32> -> tensor<1x4x3x4xf32>
  func.return
}

// -----

func.func @pool_pads_as_big_as_kernel(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{nn.max_pool2d: pads [0, 2, 0, 0] must be smaller than the window extent 2 (kernel 2, dilation 1) along spatial axis 1; a window would see only padding}}
  %0 = nn.max_pool2d %x kernel [2, 2] strides [2, 2] pads [0, 2, 0, 0] dilations [1, 1] : tensor<1x4x8x8xf32> -> tensor<1x4x4x5xf32>
  func.return
}

// -----

// With dilation 2 a 2-wide kernel spans 3 elements: 3 leading pads leave a window of padding.
func.func @pool_pads_dilated(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{nn.avg_pool2d: pads [3, 0, 0, 0] must be smaller than the window extent 3 (kernel 2, dilation 2) along spatial axis 0}}
  %0 = nn.avg_pool2d %x kernel [2, 2] strides [1, 1] pads [3, 0, 0, 0] dilations [2, 2] : tensor<1x4x8x8xf32> -> tensor<1x4x9x6xf32>
  func.return
}

// -----

// ceil_mode keeps partial windows, but not one that would hold no input element.
func.func @pool_ceil_mode_window_too_big(%x: tensor<1x4x2x2xf32>) {
  // expected-error @+1 {{nn.max_pool2d: window of extent 3 (kernel 3, dilation 1) does not fit the padded height size 2}}
  %0 = nn.max_pool2d %x kernel [3, 3] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] ceil_mode : tensor<1x4x2x2xf32> -> tensor<1x4x1x1xf32>
  func.return
}

// -----

func.func @pool_input_rank(%x: tensor<4x8x8xf32>) {
  // expected-error @+1 {{nn.avg_pool2d: input must have rank 4, got 3 ([4, 8, 8])}}
  %0 = nn.avg_pool2d %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<4x8x8xf32> -> tensor<4x4x4xf32>
  func.return
}

// -----

func.func @pool_window_too_big(%x: tensor<1x4x8x2xf32>) {
  // expected-error @+1 {{nn.max_pool2d: window of extent 3 (kernel 3, dilation 1) does not fit the padded width size 2}}
  %0 = nn.max_pool2d %x kernel [3, 3] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x4x8x2xf32> -> tensor<1x4x6x1xf32>
  func.return
}

// -----

func.func @pool_ceil_mode_result(%x: tensor<1x4x7x7xf32>) {
  // expected-error @+1 {{nn.max_pool2d: result shape [1, 4, 3, 3] does not match the inferred shape [1, 4, 4, 4]}}
  %0 = nn.max_pool2d %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] ceil_mode : tensor<1x4x7x7xf32> -> tensor<1x4x3x3xf32>
  func.return
}

// -----

func.func @global_pool_rank(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{nn.global_avg_pool: input must have rank >= 3 (N, C, spatial...), got [2, 8]}}
  %0 = nn.global_avg_pool %x : tensor<2x8xf32> -> tensor<2x8xf32>
  func.return
}

// -----

func.func @global_pool_result(%x: tensor<2x8x4x4xf32>) {
  // expected-error @+1 {{nn.global_avg_pool: result shape [2, 8] does not match the inferred shape [2, 8, 1, 1]}}
  %0 = nn.global_avg_pool %x : tensor<2x8x4x4xf32> -> tensor<2x8xf32>
  func.return
}

// -----

func.func @batch_norm_rank(%x: tensor<8xf32>, %p: tensor<8xf32>) {
  // expected-error @+1 {{nn.batch_norm: input must have rank >= 2, got [8]}}
  %0 = nn.batch_norm %x, %p, %p, %p, %p epsilon 1.0e-05 : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @batch_norm_parameter(%x: tensor<1x8x4x4xf32>, %p: tensor<8xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{nn.batch_norm: var must have shape [8] (the input's channels), got [4]}}
  %0 = nn.batch_norm %x, %p, %p, %p, %v epsilon 1.0e-05 : (tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<1x8x4x4xf32>
  func.return
}

// -----

func.func @batch_norm_epsilon(%x: tensor<1x8x4x4xf32>, %p: tensor<8xf32>) {
  // expected-error @+1 {{nn.batch_norm: epsilon must be non-negative, got -0.001}}
  %0 = nn.batch_norm %x, %p, %p, %p, %p epsilon -1.0e-03 : (tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
  func.return
}

// -----

func.func @softmax_axis(%x: tensor<2x10xf32>) {
  // expected-error @+1 {{nn.softmax: axis 2 is out of range for rank 2 (expected -2 <= axis < 2)}}
  %0 = nn.softmax %x axis 2 : tensor<2x10xf32>
  func.return
}

// -----

func.func @softmax_negative_axis(%x: tensor<2x10xf32>) {
  // expected-error @+1 {{nn.softmax: axis -3 is out of range for rank 2 (expected -2 <= axis < 2)}}
  %0 = nn.softmax %x axis -3 : tensor<2x10xf32>
  func.return
}

// -----

func.func @log_softmax_axis(%x: tensor<2x10xf32>) {
  // expected-error @+1 {{nn.log_softmax: axis 2 is out of range for rank 2 (expected -2 <= axis < 2)}}
  %0 = nn.log_softmax %x axis 2 : tensor<2x10xf32>
  func.return
}

// -----

func.func @max_pool_indices_type(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{nn.max_pool2d_indices: the result is i64 indices}}
  %0 = nn.max_pool2d_indices %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  func.return
}

// -----

func.func @max_pool_indices_shape(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{nn.max_pool2d_indices: result shape}}
  %0 = nn.max_pool2d_indices %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x4x8x8xf32> -> tensor<1x4x3x4xi64>
  func.return
}
