// Verifier messages of nn.max, nn.min and nn.prelu.
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics

func.func @max_no_broadcast(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{nn.max: shapes [2, 3], [4, 3] do not broadcast (dimension 0 of the broadcast result has sizes [2, 4])}}
  %0 = nn.max %a, %b : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @min_result(%a: tensor<2x1xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{nn.min: result shape [2, 1] does not match the inferred shape [2, 3]}}
  %0 = nn.min %a, %b : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x1xf32>
  func.return
}

// -----

func.func @prelu_widens_the_input(%x: tensor<1x4x1x1xf32>, %s: tensor<4x3x3xf32>) {
  // expected-error @+1 {{nn.prelu: slope of shape [4, 3, 3] does not broadcast to the input's shape [1, 4, 1, 1] (PRelu broadcasts the slope only)}}
  %0 = nn.prelu %x, %s : (tensor<1x4x1x1xf32>, tensor<4x3x3xf32>) -> tensor<1x4x3x3xf32>
  func.return
}

// -----

func.func @prelu_of_a_longer_slope(%x: tensor<4x2x2xf32>, %s: tensor<1x4x1x1xf32>) {
  // expected-error @+1 {{nn.prelu: slope of shape [1, 4, 1, 1] does not broadcast to the input's shape [4, 2, 2] (PRelu broadcasts the slope only)}}
  %0 = nn.prelu %x, %s : (tensor<4x2x2xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x2x2xf32>
  func.return
}
