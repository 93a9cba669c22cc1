// TOOL: nnlayout-run
// ARGS: --random-inputs 0
// ERROR: error: argument 1 (%x): element type i32 is not supported
func.func @f(%x: tensor<2xi32>) -> tensor<2xi32> {
  func.return %x : tensor<2xi32>
}
