// RUN: rm -rf %t
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// CHECK: [[FILE]]:7:3: error: operand 0 of nn.neg is used before it is defined (by this op or a later one)

func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.neg %1 : tensor<2xf32>
  %1 = nn.relu %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
