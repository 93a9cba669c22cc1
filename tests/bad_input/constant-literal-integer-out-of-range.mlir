// ERROR: {file}:3:25: error: Integer value 99999999999999999999999 is out of range for type i32 which supports values in the range [-2147483648, 4294967296)
func.func @f() -> tensor<2xf32> {
  %0 = nn.constant dense<99999999999999999999999> : tensor<2xi32>
  func.return %0 : tensor<2xf32>
}
