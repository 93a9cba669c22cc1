// ERROR: {file}:4:3: error: SSA value %0 is already defined
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu %x : tensor<2xf32>
  %0 = nn.neg %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
