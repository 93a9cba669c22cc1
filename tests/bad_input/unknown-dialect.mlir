// ERROR: {file}:3:8: error: Operation tpu.matmul is not registered
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tpu.matmul %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
