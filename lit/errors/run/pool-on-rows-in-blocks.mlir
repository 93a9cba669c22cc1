// max_pool2d_any named by hand on a layout dispatch refuses (OH = 1, so the arrays lined up): rows were pooled in blocks, wrong numbers
// RUN: rm -rf %t
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// CHECK: [[FILE]]:10:5: error: #nn.kernel<"max_pool2d_any">: layout 'NCHW4c2h' blocks axis H; pooling needs whole N, H and W

builtin.module {
  func.func @f(%x: tensor<1x3x2x6xf32>) -> tensor<1x3x1x6xf32> {
    %x_1 = layout.reorder %x : tensor<1x3x2x6xf32> -> tensor<1x3x2x6xf32, #layout.layout<"NCHW4c2h">>
    %y = nn.max_pool2d %x_1 kernel [3, 3] strides [1, 1] pads [0, 1, 1, 1] dilations [1, 1] {kernel = #nn.kernel<"max_pool2d_any", operands = ["*"], results = ["*"]>} : tensor<1x3x2x6xf32, #layout.layout<"NCHW4c2h">> -> tensor<1x3x1x6xf32, #layout.layout<"NCHW4c2h">>
    %y_1 = layout.reorder %y : tensor<1x3x1x6xf32, #layout.layout<"NCHW4c2h">> -> tensor<1x3x1x6xf32>
    func.return %y_1 : tensor<1x3x1x6xf32>
  }
}
