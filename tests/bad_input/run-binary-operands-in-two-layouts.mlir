// TOOL: nnlayout-run
// ARGS: -p insert-layouts --random-inputs 0
// ERROR: {file}:8:3: error: #nn.kernel<"add_any">: operand 1 is NHWC but operand 0 is NCHW8c; the kernel runs in operand 0's layout ("*") only
// NOTE: an #nn.kernel listing two layouts for a "*" kernel: insert-layouts reorders each operand as listed, and the kernel added NCHW8c lanes to NHWC ones (an internal error here, wrong numbers where the arrays line up)
// NOTE: the oneDNN "*" kernels refuse the same way: test_onednn_kernels.py
// NOTE: tests/bad_input/run-elementwise-result-in-another-layout.mlir: the result side
func.func @f(%x: tensor<1x16x4x4xf32>, %z: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %y = nn.add %x, %z {kernel = #nn.kernel<"add_any", operands = ["NCHW8c", "NHWC"], results = ["NCHW8c"]>} : (tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  func.return %y : tensor<1x16x4x4xf32>
}
