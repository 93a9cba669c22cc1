// ERROR: {file}:3:101: error: #nn.kernel parameter 'in_place' is given twice
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.relu %x {kernel = #nn.kernel<"relu_any", operands = ["*"], results = ["*"], in_place = 0, in_place = 0>} : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
