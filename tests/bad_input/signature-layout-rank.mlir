// ERROR: {file}:5:1: error: @f: argument 1 (%x): layout 'NCHW' has 4 axes but the tensor has rank 2
// NOTE: xDSL verifies no encoding in a function's signature: opt printed this back, and
// nnlayout-run then failed with "error: layout 'NCHW' has 4 axes but the tensor has rank 2",
// no location.
func.func @f(%x: tensor<2x3xf32, #layout.layout<"NCHW">>) -> tensor<2x3xf32, #layout.layout<"NCHW">> {
  func.return %x : tensor<2x3xf32, #layout.layout<"NCHW">>
}
