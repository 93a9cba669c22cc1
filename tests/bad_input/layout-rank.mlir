// ERROR: {file}:3:3: error: nn.relu: operand 0: layout 'NCHW8c' has 4 axes but the tensor has rank 2
func.func @f(%x: tensor<2x3xf32, #layout.layout<"NCHW8c">>) -> tensor<2x3xf32, #layout.layout<"NCHW8c">> {
  %0 = nn.relu %x : tensor<2x3xf32, #layout.layout<"NCHW8c">>
  func.return %0 : tensor<2x3xf32, #layout.layout<"NCHW8c">>
}
