// ERROR: {file}:3:45: error: f80 is not supported (xDSL holds no f80 values)
func.func @f() {
  %0 = arith.constant dense<1.0> : tensor<2xf80>
  func.return
}
