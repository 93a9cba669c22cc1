// TOOL: nnlayout-run
// ERROR: {file}:3:1: error: @f calls itself; recursion cannot be interpreted
func.func @f() -> tensor<2xf32> {
  %0 = func.call @f() : () -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
