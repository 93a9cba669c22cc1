// ERROR: {file}:3:3: error: nn.relu: operand 0: tensor<4294967296x4294967296x4xf32> has 73,786,976,294,838,206,464 elements, too many for a 64-bit byte size (at most 9,223,372,036,854,775,807 bytes)
func.func @f(%x: tensor<4294967296x4294967296x4xf32>) -> tensor<4294967296x4294967296x4xf32> {
  %0 = nn.relu %x : tensor<4294967296x4294967296x4xf32>
  func.return %0 : tensor<4294967296x4294967296x4xf32>
}
