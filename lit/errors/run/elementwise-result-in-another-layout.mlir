// a "*" kernel computes in operand 0's layout; a result listed in another one was an internal error
// RUN: rm -rf %t
// RUN: not nnlayout-run %s -p insert-layouts --random-inputs 0 --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// CHECK: [[FILE]]:8:3: error: #nn.kernel<"add_any">: result 0 is NHWC but operand 0 is NCHW8c; the kernel runs in operand 0's layout ("*") only

func.func @f(%x: tensor<1x16x4x4xf32>, %z: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %y = nn.add %x, %z {kernel = #nn.kernel<"add_any", operands = ["NCHW8c", "NCHW8c"], results = ["NHWC"]>} : (tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  func.return %y : tensor<1x16x4x4xf32>
}
