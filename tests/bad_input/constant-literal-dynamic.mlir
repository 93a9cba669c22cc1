// ERROR: {file}:3:20: error: Dense literal attribute should have a static shape.
func.func @f() -> tensor<2xf32> {
  %0 = nn.constant dense<1.0> : tensor<?xf32>
  func.return %0 : tensor<2xf32>
}
