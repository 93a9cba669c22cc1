// NOTE: xDSL's parser asserted here (an internal error)
// ERROR: {file}:4:41: error: expected ')', got ','
func.func @f() -> tensor<2xf32> {
  %0 = nn.constant dense<[1.0, (2.0, 3.0, 4.0)]> : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
