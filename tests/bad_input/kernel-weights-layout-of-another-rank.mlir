// ARGS: -p insert-layouts
// ERROR: {file}:5:3: error: IR after pass 'insert-layouts' does not verify: layout.reorder: result: layout 'GOIHW8g' has 5 axes but the tensor has rank 4
// NOTE: the reorder insert-layouts makes for a weights layout of 5 axes had no location: the error named no line
func.func @f(%x: tensor<1x8x4x4xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32> {
  %y = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {kernel = #nn.kernel<"conv2d_nchwc", operands = ["NCHW8c", "GOIHW8g"], results = ["NCHW8c"]>} : (tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32>
  func.return %y : tensor<1x8x4x4xf32>
}
