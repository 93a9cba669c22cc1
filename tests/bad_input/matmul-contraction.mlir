// ERROR: {file}:3:3: error: nn.matmul: contraction sizes differ: lhs [2, 3] has K=3, rhs [4, 2] has K=4
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4x2xf32>) -> tensor<2x2xf32> {
  %0 = nn.matmul %a, %b : (tensor<2x3xf32>, tensor<4x2xf32>) -> tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}
