// ERROR: {file}:4:27: error: a hexadecimal float literal gives the element's bits; it cannot be negative
// NOTE: MLIR and xDSL print NaN and ±Inf elements as their bits (0xFF800000 is -inf).
func.func @f() -> tensor<2xf32> {
  %0 = nn.constant dense<[-0x7F800000, 1.0]> : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
