// ERROR: {file}:3:33: error: dense literal of type tensor<1000000x1000000xf32> has 1,000,000,000,000 elements; parsing it needs 12,000,000,000,000 bytes (10.9 TiB), more than this machine's memory
func.func @f() -> tensor<1000000x1000000xf32> {
  %0 = nn.constant dense<1.0> : tensor<1000000x1000000xf32>
  func.return %0 : tensor<1000000x1000000xf32>
}
