// ERROR: {file}:3:77: error: layout 'NCHW٣c': unexpected '٣' at position 4
// NOTE: an Arabic-Indic digit three was read as a block of 3 (Python's \d and int() take any Unicode digit)
func.func @f(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32, #layout.layout<"NCHW٣c">> {
  %0 = layout.reorder %x : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32, #layout.layout<"NCHW٣c">>
  func.return %0 : tensor<1x3x8x8xf32, #layout.layout<"NCHW٣c">>
}
