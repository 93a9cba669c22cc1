// ERROR: {file}:3:3: error: nn.constant: value of type tensor<3xf32> does not match the result type tensor<2xf32>
func.func @f() -> tensor<2xf32> {
  %0 = nn.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32> -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
