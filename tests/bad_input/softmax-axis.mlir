// ERROR: {file}:3:3: error: nn.softmax: axis 2 is out of range for rank 2 (expected -2 <= axis < 2)
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = nn.softmax %x axis 2 : tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
