// ERROR: {file}:3:3: error: nn.relu: operand 0 has a zero-size dimension (tensor<0x3x8x8xf32>); empty tensors are not supported
func.func @f(%x: tensor<0x3x8x8xf32>) -> tensor<0x3x8x8xf32> {
  %0 = nn.relu %x : tensor<0x3x8x8xf32>
  func.return %0 : tensor<0x3x8x8xf32>
}
