// ARGS: -o /
// ERROR: error: cannot write '/': is a directory
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
