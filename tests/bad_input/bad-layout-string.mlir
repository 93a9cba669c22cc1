// ERROR: {file}:2:53: error: layout 'NCHW16x': block '16x' splits axis 'X', which the layout does not have
func.func @f(%x: tensor<1x3x8x8xf32, #layout.layout<"NCHW16x">>) -> tensor<1x3x8x8xf32, #layout.layout<"NCHW16x">> {
  %0 = nn.relu %x : tensor<1x3x8x8xf32, #layout.layout<"NCHW16x">>
  func.return %0 : tensor<1x3x8x8xf32, #layout.layout<"NCHW16x">>
}
