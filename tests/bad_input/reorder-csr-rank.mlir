// ERROR: {file}:3:3: error: layout.reorder: result: CSR storage needs a 2-D tensor, got rank 3
func.func @f(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32, #layout.storage<"csr">> {
  %0 = layout.reorder %x : tensor<2x3x4xf32> -> tensor<2x3x4xf32, #layout.storage<"csr">>
  func.return %0 : tensor<2x3x4xf32, #layout.storage<"csr">>
}
