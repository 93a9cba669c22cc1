// ERROR: {file}:5:14: error: expected a name or a number after '%' (e.g. %x, %0; quoted names such as %"x y" are not MLIR)
// NOTE: xDSL's message was "Expected suffix identifier after {first_char}", its placeholder
// unfilled; the same for '#', '^' and '!'.
// An SSA name with a space cannot be written:
func.func @f(%"x y": tensor<2xf32>) -> tensor<2xf32> {
  func.return %"x y" : tensor<2xf32>
}
