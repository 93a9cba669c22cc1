// Kernels whose layouts insert-layouts cannot give their operands.
// Each chunk is one case; the second RUN checks its whole first error line (file:line:col)
// and, through `not`, that no traceback is printed.
// RUN: nnlayout-opt %s -p insert-layouts --split-input-file --verify-diagnostics
// RUN: not nnlayout-opt %s -p insert-layouts --split-input-file 2>&1 | filecheck %s -DFILE %s

// kernel-weights-layout-of-another-rank: the reorder insert-layouts makes for a weights layout of 5 axes had no location: the error named no line
func.func @f(%x: tensor<1x8x4x4xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{IR after pass 'insert-layouts' does not verify: layout.reorder: result: layout 'GOIHW8g' has 5 axes but the tensor has rank 4}}
  %y = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {kernel = #nn.kernel<"conv2d_nchwc", operands = ["NCHW8c", "GOIHW8g"], results = ["NCHW8c"]>} : (tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32>
  func.return %y : tensor<1x8x4x4xf32>
}
// CHECK: [[FILE]]:10:3: error: IR after pass 'insert-layouts' does not verify: layout.reorder: result: layout 'GOIHW8g' has 5 axes but the tensor has rank 4
