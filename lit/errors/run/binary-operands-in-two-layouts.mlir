// an #nn.kernel listing two layouts for a "*" kernel: insert-layouts reorders each operand as listed, and the kernel added NCHW8c lanes to NHWC ones (an internal error here, wrong numbers where the arrays line up)
// the oneDNN "*" kernels refuse the same way: test_onednn_fallbacks.py
// lit/errors/run/elementwise-result-in-another-layout.mlir: the result side
// RUN: rm -rf %t
// RUN: not nnlayout-run %s -p insert-layouts --random-inputs 0 --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// CHECK: [[FILE]]:10:3: error: #nn.kernel<"add_any">: operand 1 is NHWC but operand 0 is NCHW8c; the kernel runs in operand 0's layout ("*") only

func.func @f(%x: tensor<1x16x4x4xf32>, %z: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %y = nn.add %x, %z {kernel = #nn.kernel<"add_any", operands = ["NCHW8c", "NHWC"], results = ["NCHW8c"]>} : (tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  func.return %y : tensor<1x16x4x4xf32>
}
