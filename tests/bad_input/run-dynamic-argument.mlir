// TOOL: nnlayout-run
// ARGS: --random-inputs 0
// ERROR: error: argument 1 (%x): has type tensor<?x2xf32>; only statically shaped tensors and memrefs can be passed in
func.func @f(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  func.return %x : tensor<?x2xf32>
}
