// ERROR: {file}:2:50: error: unknown storage 'coo'; expected one of dense, csr
func.func @f(%x: tensor<4x4xf32, #layout.storage<"coo">>) -> tensor<4x4xf32, #layout.storage<"coo">> {
  %0 = nn.relu %x : tensor<4x4xf32, #layout.storage<"coo">>
  func.return %0 : tensor<4x4xf32, #layout.storage<"coo">>
}
