// Verifier messages of nn.argmax, nn.argmin and nn.topk.
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics

func.func @topk_k_beyond_the_axis(%x: tensor<2x10xf32>) {
  // expected-error @+1 {{nn.topk: k 11 must be between 1 and the axis' size 10}}
  %0 = nn.topk %x axis 1 k 11 : tensor<2x10xf32> -> tensor<2x11xi64>
  func.return
}

// -----

func.func @argmax_axis_out_of_range(%x: tensor<2x10xf32>) {
  // expected-error @+1 {{nn.argmax: axis 2 is out of range for rank 2 (expected -2 <= axis < 2)}}
  %0 = nn.argmax %x axis 2 : tensor<2x10xf32> -> tensor<2x1xi64>
  func.return
}

// -----

func.func @argmin_of_masks(%x: tensor<2x10xi1>) {
  // expected-error @+1 {{nn.argmin: selects among floats, i32 or i64, got i1}}
  %0 = nn.argmin %x axis 1 : tensor<2x10xi1> -> tensor<2x1xi64>
  func.return
}

// -----

func.func @argmax_result_not_indices(%x: tensor<2x10xf32>) {
  // expected-error @+1 {{nn.argmax: the result is i64 indices}}
  %0 = nn.argmax %x axis 1 : tensor<2x10xf32> -> tensor<2x1xi32>
  func.return
}
