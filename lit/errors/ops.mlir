// nn ops whose operands, attributes or result types their verifier refuses.
// Each chunk is one case; the second RUN checks its whole first error line (file:line:col)
// and, through `not`, that no traceback is printed.
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics
// RUN: not nnlayout-opt %s --split-input-file 2>&1 | filecheck %s -DFILE %s

// add-broadcast
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{nn.add: shapes [2, 3], [3, 2] do not broadcast (dimension 0 of the broadcast result has sizes [2, 3])}}
  %0 = nn.add %a, %b : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: [[FILE]]:10:3: error: nn.add: shapes [2, 3], [3, 2] do not broadcast (dimension 0 of the broadcast result has sizes [2, 3])

// -----

// batch-norm-channels
func.func @f(%x: tensor<1x3x8x8xf32>, %s: tensor<3xf32>, %v: tensor<4xf32>) -> tensor<1x3x8x8xf32> {
  // expected-error @+1 {{nn.batch_norm: var must have shape [3] (the input's channels), got [4]}}
  %0 = nn.batch_norm %x, %s, %s, %s, %v epsilon 1.0e-05 : (tensor<1x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<1x3x8x8xf32>
  func.return %0 : tensor<1x3x8x8xf32>
}
// CHECK: [[FILE]]:20:3: error: nn.batch_norm: var must have shape [3] (the input's channels), got [4]

// -----

// batch-norm-epsilon
func.func @f(%x: tensor<1x3x8x8xf32>, %s: tensor<3xf32>) -> tensor<1x3x8x8xf32> {
  // expected-error @+1 {{nn.batch_norm: epsilon must be non-negative, got -1.0}}
  %0 = nn.batch_norm %x, %s, %s, %s, %s epsilon -1.0 : (tensor<1x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x8x8xf32>
  func.return %0 : tensor<1x3x8x8xf32>
}
// CHECK: [[FILE]]:30:3: error: nn.batch_norm: epsilon must be non-negative, got -1.0

// -----

// clip-bounds
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{nn.clip: min 1.0 is greater than max -1.0}}
  %0 = nn.clip %x min 1.0 max -1.0 : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: [[FILE]]:40:3: error: nn.clip: min 1.0 is greater than max -1.0

// -----

// clip-nan-bound: numpy's clip would give NaN everywhere and oneDNN's eltwise clip refuses such a bound.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{nn.clip: max is NaN; a bound must be a number (leave it out for none)}}
  %0 = nn.clip %x min 0.0 max 0x7FC00000 : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: [[FILE]]:50:3: error: nn.clip: max is NaN; a bound must be a number (leave it out for none)

// -----

// concat-rank
func.func @f(%a: tensor<1x8x4x4xf32>, %b: tensor<8x4x4xf32>) -> tensor<1x16x4x4xf32> {
  // expected-error @+1 {{nn.concat: input 1 has rank 3 ([8, 4, 4]), but input 0 has rank 4 ([1, 8, 4, 4])}}
  %0 = nn.concat %a, %b axis 1 : (tensor<1x8x4x4xf32>, tensor<8x4x4xf32>) -> tensor<1x16x4x4xf32>
  func.return %0 : tensor<1x16x4x4xf32>
}
// CHECK: [[FILE]]:60:3: error: nn.concat: input 1 has rank 3 ([8, 4, 4]), but input 0 has rank 4 ([1, 8, 4, 4])

// -----

// concat-shape
func.func @f(%a: tensor<1x8x4x4xf32>, %b: tensor<1x8x5x4xf32>) -> tensor<1x16x4x4xf32> {
  // expected-error @+1 {{nn.concat: input 1 has shape [1, 8, 5, 4], which differs from input 0 [1, 8, 4, 4] outside the concatenation axis 1}}
  %0 = nn.concat %a, %b axis 1 : (tensor<1x8x4x4xf32>, tensor<1x8x5x4xf32>) -> tensor<1x16x4x4xf32>
  func.return %0 : tensor<1x16x4x4xf32>
}
// CHECK: [[FILE]]:70:3: error: nn.concat: input 1 has shape [1, 8, 5, 4], which differs from input 0 [1, 8, 4, 4] outside the concatenation axis 1

// -----

// conv-bias-shape
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{nn.conv2d: bias must have shape [4], got [3]}}
  %0 = nn.conv2d %x, %w, %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}
// CHECK: [[FILE]]:80:3: error: nn.conv2d: bias must have shape [4], got [3]

// -----

// conv-channels
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{nn.conv2d: input has 3 channels but weight expects 4 (groups=1)}}
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}
// CHECK: [[FILE]]:90:3: error: nn.conv2d: input has 3 channels but weight expects 4 (groups=1)

// -----

// conv-groups
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{nn.conv2d: input has 3 channels, not divisible by groups=2}}
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 2 : (tensor<1x3x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}
// CHECK: [[FILE]]:100:3: error: nn.conv2d: input has 3 channels, not divisible by groups=2

// -----

// conv-input-rank
func.func @f(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{nn.conv2d: input must have rank 4, got 3 ([3, 8, 8])}}
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}
// CHECK: [[FILE]]:110:3: error: nn.conv2d: input must have rank 4, got 3 ([3, 8, 8])

// -----

// conv-negative-pads
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{nn.conv2d: pads must be non-negative, got [-1, 0, 0, 0]}}
  %0 = nn.conv2d %x, %w strides [1, 1] pads [-1, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}
// CHECK: [[FILE]]:120:3: error: nn.conv2d: pads must be non-negative, got [-1, 0, 0, 0]

// -----

// conv-oversized-pads
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{nn.conv2d: result shape [1, 4, 6, 6] does not match the inferred shape [1, 4, 9223372036854775814, 6]}}
  %0 = nn.conv2d %x, %w strides [1, 1] pads [4611686018427387904, 0, 4611686018427387904, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}
// CHECK: [[FILE]]:130:3: error: nn.conv2d: result shape [1, 4, 6, 6] does not match the inferred shape [1, 4, 9223372036854775814, 6]

// -----

// conv-result-shape
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{nn.conv2d: result shape [1, 4, 8, 8] does not match the inferred shape [1, 4, 6, 6]}}
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return %0 : tensor<1x4x8x8xf32>
}
// CHECK: [[FILE]]:140:3: error: nn.conv2d: result shape [1, 4, 8, 8] does not match the inferred shape [1, 4, 6, 6]

// -----

// conv-strides-length
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{nn.conv2d: strides needs 2 values, got [1, 1, 1]}}
  %0 = nn.conv2d %x, %w strides [1, 1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}
// CHECK: [[FILE]]:150:3: error: nn.conv2d: strides needs 2 values, got [1, 1, 1]

// -----

// conv-window-too-large
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x9x9xf32>) -> tensor<1x4x1x1xf32> {
  // expected-error @+1 {{nn.conv2d: window of extent 9 (kernel 9, dilation 1) does not fit the padded height size 8}}
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x9x9xf32>) -> tensor<1x4x1x1xf32>
  func.return %0 : tensor<1x4x1x1xf32>
}
// CHECK: [[FILE]]:160:3: error: nn.conv2d: window of extent 9 (kernel 9, dilation 1) does not fit the padded height size 8

// -----

// conv-zero-dilation
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{nn.conv2d: dilations must be positive, got [1, 0]}}
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 0] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}
// CHECK: [[FILE]]:170:3: error: nn.conv2d: dilations must be positive, got [1, 0]

// -----

// conv-zero-groups
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{nn.conv2d: groups must be positive, got 0}}
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 0 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}
// CHECK: [[FILE]]:180:3: error: nn.conv2d: groups must be positive, got 0

// -----

// conv-zero-stride
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{nn.conv2d: strides must be positive, got [0, 1]}}
  %0 = nn.conv2d %x, %w strides [0, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}
// CHECK: [[FILE]]:190:3: error: nn.conv2d: strides must be positive, got [0, 1]

// -----

// convt-output-padding
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x2x11x10xf32> {
  // expected-error @+1 {{nn.conv_transpose2d: output_padding [1, 0] must be smaller than the stride or the dilation on each axis}}
  %0 = nn.conv_transpose2d %x, %w strides [1, 1] pads [0, 0, 0, 0] output_padding [1, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x2x11x10xf32>
  func.return %0 : tensor<1x2x11x10xf32>
}
// CHECK: [[FILE]]:200:3: error: nn.conv_transpose2d: output_padding [1, 0] must be smaller than the stride or the dilation on each axis

// -----

// element-type-mismatch
func.func @f(%a: tensor<2xf32>, %b: tensor<2xf16>) -> tensor<2xf32> {
  // expected-error @+1 {{nn.add: operand 1 has element type f16, expected f32 like operand 0}}
  %0 = nn.add %a, %b : (tensor<2xf32>, tensor<2xf16>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// CHECK: [[FILE]]:210:3: error: nn.add: operand 1 has element type f16, expected f32 like operand 0

// -----

// flatten-axis
func.func @f(%x: tensor<2x3x4xf32>) -> tensor<24x1xf32> {
  // expected-error @+1 {{nn.flatten: axis 4 is out of range for rank 3 (expected -3 <= axis < 4)}}
  %0 = nn.flatten %x axis 4 : tensor<2x3x4xf32> -> tensor<24x1xf32>
  func.return %0 : tensor<24x1xf32>
}
// CHECK: [[FILE]]:220:3: error: nn.flatten: axis 4 is out of range for rank 3 (expected -3 <= axis < 4)

// -----

// fused-conv-clip-nan-bound: the check nn.clip makes, for a clip fused into a convolution (oneDNN refused it inside).
func.func @f(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %w = nn.constant dense<0.1> : tensor<8x8x1x1xf32>
  %b = nn.constant dense<0.0> : tensor<8xf32>
  // expected-error @+1 {{nn.fused_conv2d: min is NaN; a bound must be a number (leave it out for none)}}
  %y = nn.fused_conv2d %x, %w, %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 activation "clip" min 0x7FC00000 max 6.0 : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
  func.return %y : tensor<1x8x4x4xf32>
}
// CHECK: [[FILE]]:232:3: error: nn.fused_conv2d: min is NaN; a bound must be a number (leave it out for none)

// -----

// gemm-c-broadcast
func.func @f(%a: tensor<1x3xf32>, %b: tensor<3x4xf32>, %c: tensor<2x1xf32>) -> tensor<1x4xf32> {
  // expected-error @+1 {{nn.gemm: c of shape [2, 1] does not broadcast to the result [1, 4]}}
  %0 = nn.gemm %a, %b, %c alpha 1.0 beta 1.0 : (tensor<1x3xf32>, tensor<3x4xf32>, tensor<2x1xf32>) -> tensor<1x4xf32>
  func.return %0 : tensor<1x4xf32>
}
// CHECK: [[FILE]]:242:3: error: nn.gemm: c of shape [2, 1] does not broadcast to the result [1, 4]

// -----

// matmul-contraction
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{nn.matmul: contraction sizes differ: lhs [2, 3] has K=3, rhs [4, 2] has K=4}}
  %0 = nn.matmul %a, %b : (tensor<2x3xf32>, tensor<4x2xf32>) -> tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}
// CHECK: [[FILE]]:252:3: error: nn.matmul: contraction sizes differ: lhs [2, 3] has K=3, rhs [4, 2] has K=4

// -----

// pool-oversized-pads
func.func @f(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x9x7xf32> {
  // expected-error @+1 {{nn.max_pool2d: pads [2, 0, 0, 0] must be smaller than the window extent 2 (kernel 2, dilation 1) along spatial axis 0; a window would see only padding}}
  %0 = nn.max_pool2d %x kernel [2, 2] strides [1, 1] pads [2, 0, 0, 0] dilations [1, 1] : tensor<1x3x8x8xf32> -> tensor<1x3x9x7xf32>
  func.return %0 : tensor<1x3x9x7xf32>
}
// CHECK: [[FILE]]:262:3: error: nn.max_pool2d: pads [2, 0, 0, 0] must be smaller than the window extent 2 (kernel 2, dilation 1) along spatial axis 0; a window would see only padding

// -----

// pool-zero-kernel
func.func @f(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x7x8xf32> {
  // expected-error @+1 {{nn.avg_pool2d: kernel must be positive, got [2, 0]}}
  %0 = nn.avg_pool2d %x kernel [2, 0] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x3x8x8xf32> -> tensor<1x3x7x8xf32>
  func.return %0 : tensor<1x3x7x8xf32>
}
// CHECK: [[FILE]]:272:3: error: nn.avg_pool2d: kernel must be positive, got [2, 0]

// -----

// pool-zero-stride
func.func @f(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x7x4xf32> {
  // expected-error @+1 {{nn.max_pool2d: strides must be positive, got [0, 2]}}
  %0 = nn.max_pool2d %x kernel [2, 2] strides [0, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x3x8x8xf32> -> tensor<1x3x7x4xf32>
  func.return %0 : tensor<1x3x7x4xf32>
}
// CHECK: [[FILE]]:282:3: error: nn.max_pool2d: strides must be positive, got [0, 2]

// -----

// reshape-count
func.func @f(%x: tensor<2x3xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{nn.reshape: cannot reshape [2, 3] (6 elements) to [4, 2] (8 elements)}}
  %0 = nn.reshape %x : tensor<2x3xf32> -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}
// CHECK: [[FILE]]:292:3: error: nn.reshape: cannot reshape [2, 3] (6 elements) to [4, 2] (8 elements)

// -----

// softmax-axis
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{nn.softmax: axis 2 is out of range for rank 2 (expected -2 <= axis < 2)}}
  %0 = nn.softmax %x axis 2 : tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: [[FILE]]:302:3: error: nn.softmax: axis 2 is out of range for rank 2 (expected -2 <= axis < 2)

// -----

// transpose-perm
func.func @f(%x: tensor<2x3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{nn.transpose: perm [0, 2] is not a permutation of 0..2}}
  %0 = nn.transpose %x perm [0, 2] : tensor<2x3x4xf32> -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
// CHECK: [[FILE]]:312:3: error: nn.transpose: perm [0, 2] is not a permutation of 0..2
