// ERROR: {file}:3:3: error: nn.flatten: axis 4 is out of range for rank 3 (expected -3 <= axis < 4)
func.func @f(%x: tensor<2x3x4xf32>) -> tensor<24x1xf32> {
  %0 = nn.flatten %x axis 4 : tensor<2x3x4xf32> -> tensor<24x1xf32>
  func.return %0 : tensor<24x1xf32>
}
