// conv2d_nchwc named by hand for groups that split its blocks (dispatch refuses it): an internal error in numpy
// RUN: rm -rf %t
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// CHECK: [[FILE]]:11:5: error: #nn.kernel<"conv2d_nchwc">: 4 groups of 8 input and 8 output channels split the blocks of 16 and 16 lanes

builtin.module {
  func.func @f(%x: tensor<1x32x6x6xf32>, %w: tensor<32x8x3x3xf32>) -> tensor<1x32x6x6xf32> {
    %x_1 = layout.reorder %x : tensor<1x32x6x6xf32> -> tensor<1x32x6x6xf32, #layout.layout<"NCHW16c">>
    %w_1 = layout.reorder %w : tensor<32x8x3x3xf32> -> tensor<32x8x3x3xf32, #layout.layout<"IHW16iO16o">>
    %y = nn.conv2d %x_1, %w_1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 4 {kernel = #nn.kernel<"conv2d_nchwc", operands = ["NCHW16c", "IHW16iO16o"], results = ["NCHW16c"]>} : (tensor<1x32x6x6xf32, #layout.layout<"NCHW16c">>, tensor<32x8x3x3xf32, #layout.layout<"IHW16iO16o">>) -> tensor<1x32x6x6xf32, #layout.layout<"NCHW16c">>
    %y_1 = layout.reorder %y : tensor<1x32x6x6xf32, #layout.layout<"NCHW16c">> -> tensor<1x32x6x6xf32>
    func.return %y_1 : tensor<1x32x6x6xf32>
  }
}
