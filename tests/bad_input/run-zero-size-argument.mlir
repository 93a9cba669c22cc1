// TOOL: nnlayout-run
// ARGS: --random-inputs 0
// ERROR: error: argument 1 (%x): has type tensor<0x2xf32>, with a zero-size dimension; empty tensors are not supported
func.func @f(%x: tensor<0x2xf32>) -> tensor<0x2xf32> {
  func.return %x : tensor<0x2xf32>
}
