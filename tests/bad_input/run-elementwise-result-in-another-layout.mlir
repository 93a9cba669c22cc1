// TOOL: nnlayout-run
// ARGS: -p insert-layouts --random-inputs 0
// ERROR: {file}:6:3: error: #nn.kernel<"add_any">: result 0 is NHWC but operand 0 is NCHW8c; the kernel runs in operand 0's layout ("*") only
// NOTE: a "*" kernel computes in operand 0's layout; a result listed in another one was an internal error
func.func @f(%x: tensor<1x16x4x4xf32>, %z: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %y = nn.add %x, %z {kernel = #nn.kernel<"add_any", operands = ["NCHW8c", "NCHW8c"], results = ["NHWC"]>} : (tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  func.return %y : tensor<1x16x4x4xf32>
}
