// ERROR: {file}:3:3: error: nn.relu: operand 0: tensor<1x3x4611686018427387904x1xf32, #layout.layout<"NCHW16c">> has 73,786,976,294,838,206,464 elements, too many for a 64-bit byte size (at most 9,223,372,036,854,775,807 bytes)
func.func @f(%x: tensor<1x3x4611686018427387904x1xf32, #layout.layout<"NCHW16c">>) -> tensor<1x3x4611686018427387904x1xf32, #layout.layout<"NCHW16c">> {
  %0 = nn.relu %x : tensor<1x3x4611686018427387904x1xf32, #layout.layout<"NCHW16c">>
  func.return %0 : tensor<1x3x4611686018427387904x1xf32, #layout.layout<"NCHW16c">>
}
