// dwconv2d_nchwc named by hand with kH and kW swapped in its weights' layout: it read every filter transposed, wrong numbers
// RUN: rm -rf %t
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// CHECK: [[FILE]]:11:5: error: #nn.kernel<"dwconv2d_nchwc">: weights in layout 'OIWH8o', not OIHW8o (IR dispatched by an older nnlayout, or by hand: run select-dispatch and insert-layouts on the tensor-level program again)

builtin.module {
  func.func @f(%x: tensor<1x16x8x8xf32>, %w: tensor<16x1x3x3xf32>) -> tensor<1x16x8x8xf32> {
    %x_1 = layout.reorder %x : tensor<1x16x8x8xf32> -> tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>
    %w_1 = layout.reorder %w : tensor<16x1x3x3xf32> -> tensor<16x1x3x3xf32, #layout.layout<"OIWH8o">>
    %y = nn.conv2d %x_1, %w_1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 16 {kernel = #nn.kernel<"dwconv2d_nchwc", operands = ["NCHW8c", "OIWH8o"], results = ["NCHW8c"]>} : (tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>, tensor<16x1x3x3xf32, #layout.layout<"OIWH8o">>) -> tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>
    %y_1 = layout.reorder %y : tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">> -> tensor<1x16x8x8xf32>
    func.return %y_1 : tensor<1x16x8x8xf32>
  }
}
