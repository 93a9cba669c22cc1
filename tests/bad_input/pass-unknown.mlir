// ARGS: -p vectorize-everything
// ERROR: error: unknown pass 'vectorize-everything'; available passes:
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
