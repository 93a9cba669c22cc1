// plan-memory trusts in_place and put the pooling's result over its input, which oneDNN's pooling (max_pool2d_onednn) still read: wrong numbers
// the same attribute on the numpy kernel is refused alike, as what it declares is wrong
// RUN: rm -rf %t
// RUN: not nnlayout-run %s -p insert-layouts,bufferize,plan-memory --random-inputs 0 --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// CHECK: [[FILE]]:10:3: error: #nn.kernel<"max_pool2d_any">: in_place = 0, but the kernel writes over no operand

func.func @f(%x: tensor<2x12x7x7xf32>) -> tensor<2x12x7x7xf32> {
  %a = nn.relu %x : tensor<2x12x7x7xf32>
  %y = nn.max_pool2d %a kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] {kernel = #nn.kernel<"max_pool2d_any", operands = ["NCHW8c"], results = ["NCHW8c"], in_place = 0>} : tensor<2x12x7x7xf32> -> tensor<2x12x7x7xf32>
  func.return %y : tensor<2x12x7x7xf32>
}
