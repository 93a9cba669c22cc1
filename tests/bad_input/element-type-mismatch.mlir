// ERROR: {file}:3:3: error: nn.add: operand 1 has element type f16, expected f32 like operand 0
func.func @f(%a: tensor<2xf32>, %b: tensor<2xf16>) -> tensor<2xf32> {
  %0 = nn.add %a, %b : (tensor<2xf32>, tensor<2xf16>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
