// ERROR: {file}:3:3: error: nn.relu: operand 0: tensor<9223372036854775807x2xf32> has 18,446,744,073,709,551,614 elements, too many for a 64-bit byte size (at most 9,223,372,036,854,775,807 bytes)
func.func @f(%x: tensor<9223372036854775807x2xf32>) -> tensor<9223372036854775807x2xf32> {
  %0 = nn.relu %x : tensor<9223372036854775807x2xf32>
  func.return %0 : tensor<9223372036854775807x2xf32>
}
