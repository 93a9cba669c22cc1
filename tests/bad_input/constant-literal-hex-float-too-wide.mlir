// ERROR: {file}:3:27: error: a hexadecimal literal has more bits than its element type f32
func.func @f() -> tensor<2xf32> {
  %0 = nn.constant dense<[0x7FF0000000000000, 1.0]> : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
