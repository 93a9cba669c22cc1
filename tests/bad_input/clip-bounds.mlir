// ERROR: {file}:3:3: error: nn.clip: min 1.0 is greater than max -1.0
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.clip %x min 1.0 max -1.0 : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
