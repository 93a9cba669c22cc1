// ARGS: -p default-pipeline
// ERROR: {file}:5:1: error: @f: argument 1 (%x): unknown tensor encoding "foo"; expected #layout.layout<...> or #layout.storage<...>
// NOTE: default-pipeline then said "IR after pass 'default-pipeline' does not verify" about a
// layout.reorder it had made, with no location.
func.func @f(%x: tensor<2x3xf32, "foo">) -> tensor<2x3xf32, "foo"> {
  func.return %x : tensor<2x3xf32, "foo">
}
