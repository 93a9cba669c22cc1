// qavg_pool2d_onednn and dynamic_quantize_onednn named for values typed in another layout
// than theirs (NHWC; plain): refused at the op, not computed in the wrong order.
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s
// CHECK: 6:3: error: #nn.kernel<"qavg_pool2d_onednn">: operand 0 is plain; the kernel takes it NHWC
func.func @main(%x: tensor<1x4x5x5xui8>) -> tensor<1x4x5x5xui8> {
  %a = nn.qavg_pool2d %x kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] count_include_pad {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<100> : tensor<ui8>, y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<100> : tensor<ui8>, kernel = #nn.kernel<"qavg_pool2d_onednn", operands = [""], results = [""]>} : tensor<1x4x5x5xui8> -> tensor<1x4x5x5xui8>
  func.return %a : tensor<1x4x5x5xui8>
}
