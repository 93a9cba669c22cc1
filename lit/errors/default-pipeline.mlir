// Programs that verify but that default-pipeline cannot compile.
// Each chunk is one case; the second RUN checks its whole first error line (file:line:col)
// and, through `not`, that no traceback is printed.
// RUN: nnlayout-opt %s -p default-pipeline --split-input-file --verify-diagnostics
// RUN: not nnlayout-opt %s -p default-pipeline --split-input-file 2>&1 | filecheck %s -DFILE %s

// bufferize-csr-result: a CSR value made at run time (here by the reorder, the first such op; the relu's
// kernel keeping CSR would be the next): bufferize's error had no location.
func.func @f(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{default-pipeline (bufferize): result 0 is tensor<4x64xf32, #layout.storage<"csr">>: CSR tensors have no buffer; bufferize needs dense results}}
  %t = layout.reorder %x : tensor<4x64xf32> -> tensor<4x64xf32, #layout.storage<"csr">>
  %r = nn.relu %t {kernel = #nn.kernel<"relu_any", operands = ["*"], results = ["*"], in_place = 0>} : tensor<4x64xf32, #layout.storage<"csr">>
  %v = layout.reorder %r : tensor<4x64xf32, #layout.storage<"csr">> -> tensor<4x64xf32>
  func.return %v : tensor<4x64xf32>
}
// CHECK: [[FILE]]:11:3: error: default-pipeline (bufferize): result 0 is tensor<4x64xf32, #layout.storage<"csr">>: CSR tensors have no buffer; bufferize needs dense results

// -----

// signature-unknown-encoding: default-pipeline then said "IR after pass 'default-pipeline' does not verify" about a
// layout.reorder it had made, with no location.
// expected-error @+1 {{@f: argument 1 (%x): unknown tensor encoding "foo"; expected #layout.layout<...> or #layout.storage<...>}}
func.func @f(%x: tensor<2x3xf32, "foo">) -> tensor<2x3xf32, "foo"> {
  func.return %x : tensor<2x3xf32, "foo">
}
// CHECK: [[FILE]]:23:1: error: @f: argument 1 (%x): unknown tensor encoding "foo"; expected #layout.layout<...> or #layout.storage<...>
