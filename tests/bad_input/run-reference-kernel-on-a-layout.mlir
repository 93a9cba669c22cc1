// TOOL: nnlayout-run
// ARGS: -p insert-layouts --random-inputs 0
// ERROR: {file}:6:3: error: #nn.kernel<"softmax_ref">: operand 0 is NHWC; the kernel takes it plain
// NOTE: a reference kernel listed with NHWC: insert-layouts reorders as listed, and softmax_ref normalised the physical array's axis 1 (W, not C): wrong numbers
func.func @f(%x: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %y = nn.softmax %x axis 1 {kernel = #nn.kernel<"softmax_ref", operands = ["NHWC"], results = ["NHWC"]>} : tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}
