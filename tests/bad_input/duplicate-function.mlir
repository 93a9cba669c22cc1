// ERROR: {file}:7:1: error: redefinition of symbol @f (first defined at {file}:4:1)
// NOTE: xDSL blamed the implicit module, which has no location.

func.func @f(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  func.return %x : tensor<2x2xf32>
}
func.func @f(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = nn.neg %x : tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}
