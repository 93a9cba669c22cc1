// dispatch gives such an add the reference kernel; named by hand, add_any broadcast the physical arrays (an internal error, or wrong numbers where they line up)
// RUN: rm -rf %t
// RUN: not nnlayout-run %s -p insert-layouts --random-inputs 0 --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// CHECK: [[FILE]]:8:3: error: #nn.kernel<"add_any">: broadcasting operand 1 [8, 1, 1] to [1, 8, 4, 4] (the kernel broadcasts axes of size 1 of an operand of the same rank; extend-ranks gives a shorter operand the result's rank)

func.func @f(%x: tensor<1x8x4x4xf32>, %s: tensor<8x1x1xf32>) -> tensor<1x8x4x4xf32> {
  %y = nn.add %x, %s {kernel = #nn.kernel<"add_any", operands = ["NCHW8c", ""], results = ["NCHW8c"], in_place = 0>} : (tensor<1x8x4x4xf32>, tensor<8x1x1xf32>) -> tensor<1x8x4x4xf32>
  func.return %y : tensor<1x8x4x4xf32>
}
