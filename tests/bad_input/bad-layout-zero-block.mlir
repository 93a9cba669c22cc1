// ERROR: {file}:2:53: error: layout 'NCHW0c': block '0c' has factor 0; factors must be positive
func.func @f(%x: tensor<1x3x8x8xf32, #layout.layout<"NCHW0c">>) -> tensor<1x3x8x8xf32, #layout.layout<"NCHW0c">> {
  %0 = nn.relu %x : tensor<1x3x8x8xf32, #layout.layout<"NCHW0c">>
  func.return %0 : tensor<1x3x8x8xf32, #layout.layout<"NCHW0c">>
}
