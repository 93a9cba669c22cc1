// ERROR: {file}:3:3: error: nn.relu: operand 0: unknown tensor encoding "dense"; expected #layout.layout<...> or #layout.storage<...>
func.func @f(%x: tensor<2xf32, "dense">) -> tensor<2xf32, "dense"> {
  %0 = nn.relu %x : tensor<2xf32, "dense">
  func.return %0 : tensor<2xf32, "dense">
}
