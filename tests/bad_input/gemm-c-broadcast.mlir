// ERROR: {file}:3:3: error: nn.gemm: c of shape [2, 1] does not broadcast to the result [1, 4]
func.func @f(%a: tensor<1x3xf32>, %b: tensor<3x4xf32>, %c: tensor<2x1xf32>) -> tensor<1x4xf32> {
  %0 = nn.gemm %a, %b, %c alpha 1.0 beta 1.0 : (tensor<1x3xf32>, tensor<3x4xf32>, tensor<2x1xf32>) -> tensor<1x4xf32>
  func.return %0 : tensor<1x4xf32>
}
