// An int8 matmul kernel named for an operand typed NHWC (hand-written IR): the kernel reads
// plain rows, so the run is refused at the op (it read the NHWC bytes as rows before).
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s
// CHECK: 7:3: error: #nn.kernel<"matmul_integer_onednn">: operand 0 is NHWC; the kernel takes it plain
func.func @main(%a: tensor<1x2x3x8xui8, #layout.layout<"NHWC">>) -> tensor<1x2x3x4xi32> {
  %w = nn.constant dense<1> : tensor<8x4xi8>
  %y = nn.matmul_integer %a, %w {kernel = #nn.kernel<"matmul_integer_onednn", operands = ["NHWC", ""], results = [""]>} : (tensor<1x2x3x8xui8, #layout.layout<"NHWC">>, tensor<8x4xi8>) -> tensor<1x2x3x4xi32>
  func.return %y : tensor<1x2x3x4xi32>
}
