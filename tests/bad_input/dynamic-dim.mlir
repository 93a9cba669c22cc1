// ERROR: {file}:3:3: error: nn.relu: operand 0 has a dynamic dimension (tensor<?x3x8x8xf32>); nn ops need static shapes
func.func @f(%x: tensor<?x3x8x8xf32>) -> tensor<?x3x8x8xf32> {
  %0 = nn.relu %x : tensor<?x3x8x8xf32>
  func.return %0 : tensor<?x3x8x8xf32>
}
