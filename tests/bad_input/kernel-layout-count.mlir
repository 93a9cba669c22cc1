// ERROR: {file}:3:3: error: nn.relu: #nn.kernel<"conv2d_nchwc"> gives layouts for 2 operand(s) and 1 result(s); the op has 1 and 1
func.func @f(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %0 = nn.relu %x {kernel = #nn.kernel<"conv2d_nchwc", operands = ["NCHW8c", "OIHW8i8o"], results = ["NCHW8c"]>} : tensor<1x16x8x8xf32>
  func.return %0 : tensor<1x16x8x8xf32>
}
