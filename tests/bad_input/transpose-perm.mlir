// ERROR: {file}:3:3: error: nn.transpose: perm [0, 2] is not a permutation of 0..2
func.func @f(%x: tensor<2x3x4xf32>) -> tensor<2x4xf32> {
  %0 = nn.transpose %x perm [0, 2] : tensor<2x3x4xf32> -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
