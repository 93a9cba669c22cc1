// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s
// CHECK: 4:3: error: #nn.kernel<"dynamic_quantize_onednn">: operand 0 is NHWC; the kernel takes it plain
func.func @main(%x: tensor<1x4x2x3xf32, #layout.layout<"NHWC">>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<1x4x2x3xui8> {
  %a = nn.dynamic_quantize %x, %s, %z {kernel = #nn.kernel<"dynamic_quantize_onednn", operands = ["NHWC", "", ""], results = [""]>} : (tensor<1x4x2x3xf32, #layout.layout<"NHWC">>, tensor<f32>, tensor<ui8>) -> tensor<1x4x2x3xui8>
  func.return %a : tensor<1x4x2x3xui8>
}
