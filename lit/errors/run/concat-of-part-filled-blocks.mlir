// concat_nchwc named by hand for 12 + 20 channels in NCHW8c: the generated module (-p bufferize,plan-memory) gave wrong numbers
// RUN: rm -rf %t
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// CHECK: [[FILE]]:11:5: error: #nn.kernel<"concat_nchwc">: input 0 of type tensor<1x12x4x4xf32, #layout.layout<"NCHW8c">> is not 12 channels in whole blocks of the result's layout NCHW8c

builtin.module {
  func.func @f(%a: tensor<1x12x4x4xf32>, %b: tensor<1x20x4x4xf32>) -> tensor<1x32x4x4xf32> {
    %a1 = layout.reorder %a : tensor<1x12x4x4xf32> -> tensor<1x12x4x4xf32, #layout.layout<"NCHW8c">>
    %b1 = layout.reorder %b : tensor<1x20x4x4xf32> -> tensor<1x20x4x4xf32, #layout.layout<"NCHW8c">>
    %y = nn.concat %a1, %b1 axis 1 {kernel = #nn.kernel<"concat_nchwc", operands = ["NCHW8c", "NCHW8c"], results = ["NCHW8c"]>} : (tensor<1x12x4x4xf32, #layout.layout<"NCHW8c">>, tensor<1x20x4x4xf32, #layout.layout<"NCHW8c">>) -> tensor<1x32x4x4xf32, #layout.layout<"NCHW8c">>
    %y1 = layout.reorder %y : tensor<1x32x4x4xf32, #layout.layout<"NCHW8c">> -> tensor<1x32x4x4xf32>
    func.return %y1 : tensor<1x32x4x4xf32>
  }
}
