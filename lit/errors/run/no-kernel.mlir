// RUN: rm -rf %t
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// CHECK: [[FILE]]:7:3: error: the interpreter cannot run 'arith.constant' (no kernel)

func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = arith.constant dense<1.0> : tensor<2xf32>
  %0 = nn.add %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
