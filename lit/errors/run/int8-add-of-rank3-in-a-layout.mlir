// qadd_onednn named for rank-3 values typed NWC (hand-written IR): it reads a flat run of
// plain data, so the run is refused at the op.
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s
// CHECK: 8:3: error: #nn.kernel<"qadd_onednn">: operand 0 is NWC; the kernel takes it plain
func.func @f(%x: tensor<1x12x64xui8>, %y: tensor<1x12x64xui8>) -> tensor<1x12x64xui8> {
  %xl = layout.reorder %x : tensor<1x12x64xui8> -> tensor<1x12x64xui8, #layout.layout<"NWC">>
  %yl = layout.reorder %y : tensor<1x12x64xui8> -> tensor<1x12x64xui8, #layout.layout<"NWC">>
  %a = nn.qadd %xl, %yl {a_scale = dense<0.03> : tensor<f32>, a_zero_point = dense<120> : tensor<ui8>, b_scale = dense<0.02> : tensor<f32>, b_zero_point = dense<100> : tensor<ui8>, y_scale = dense<0.05> : tensor<f32>, y_zero_point = dense<128> : tensor<ui8>, kernel = #nn.kernel<"qadd_onednn", operands = ["NWC", "NWC"], results = ["NWC"], in_place = 0>} : (tensor<1x12x64xui8, #layout.layout<"NWC">>, tensor<1x12x64xui8, #layout.layout<"NWC">>) -> tensor<1x12x64xui8, #layout.layout<"NWC">>
  %r = layout.reorder %a : tensor<1x12x64xui8, #layout.layout<"NWC">> -> tensor<1x12x64xui8>
  func.return %r : tensor<1x12x64xui8>
}
