// ARGS: -p default-pipeline
// ERROR: {file}:6:3: error: default-pipeline (bufferize): result 0 is tensor<4x64xf32, #layout.storage<"csr">>: CSR tensors have no buffer; bufferize needs dense results
// NOTE: a CSR value made at run time (here by the reorder, the first such op; the relu's
// kernel keeping CSR would be the next): bufferize's error had no location.
func.func @f(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %t = layout.reorder %x : tensor<4x64xf32> -> tensor<4x64xf32, #layout.storage<"csr">>
  %r = nn.relu %t {kernel = #nn.kernel<"relu_any", operands = ["*"], results = ["*"], in_place = 0>} : tensor<4x64xf32, #layout.storage<"csr">>
  %v = layout.reorder %r : tensor<4x64xf32, #layout.storage<"csr">> -> tensor<4x64xf32>
  func.return %v : tensor<4x64xf32>
}
