// ERROR: {file}:3:3: error: layout.reorder: element type changes from f32 to f16
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf16> {
  %0 = layout.reorder %x : tensor<2x3xf32> -> tensor<2x3xf16>
  func.return %0 : tensor<2x3xf16>
}
