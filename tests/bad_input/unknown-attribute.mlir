// ERROR: {file}:2:42: error: 'nn.tiling' is not registered
func.func @f(%x: tensor<2xf32, #nn.tiling<"4">>) -> tensor<2xf32> {
  %0 = nn.relu %x : tensor<2xf32, #nn.tiling<"4">>
  func.return %0 : tensor<2xf32>
}
