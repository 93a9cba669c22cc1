// ERROR: {file}:4:23: error: a hexadecimal float literal gives the bits of an f32 (8 digits) or an f64 (16 digits)
// NOTE: 0x7F800000 (+inf, as the printer writes it) is read; 0x7F80 is neither width.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.clip %x max 0x7F80 : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
