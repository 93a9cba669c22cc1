// ERROR: {file}:3:3: error: nn.relu: operand 0: tensor<99999999999999999999xf32> has 99,999,999,999,999,999,999 elements, too many for a 64-bit byte size (at most 9,223,372,036,854,775,807 bytes)
func.func @f(%x: tensor<99999999999999999999xf32>) -> tensor<99999999999999999999xf32> {
  %0 = nn.relu %x : tensor<99999999999999999999xf32>
  func.return %0 : tensor<99999999999999999999xf32>
}
