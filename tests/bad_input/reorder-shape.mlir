// ERROR: {file}:3:3: error: layout.reorder: logical shape changes from [1, 3, 8, 8] to [1, 8, 8, 3]; a reorder only rearranges memory
func.func @f(%x: tensor<1x3x8x8xf32>) -> tensor<1x8x8x3xf32, #layout.layout<"NHWC">> {
  %0 = layout.reorder %x : tensor<1x3x8x8xf32> -> tensor<1x8x8x3xf32, #layout.layout<"NHWC">>
  func.return %0 : tensor<1x8x8x3xf32, #layout.layout<"NHWC">>
}
