// ERROR: {file}:3:20: error: Expected memref, vector or tensor type of integer, index, float, or complex type
func.func @f() -> tensor<2xf32> {
  %0 = nn.constant dense<1.0> : f32
  func.return %0 : tensor<2xf32>
}
