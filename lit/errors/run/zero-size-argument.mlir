// RUN: rm -rf %t
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s
// RUN: not test -e %t
// CHECK: error: argument 1 (%x): has type tensor<0x2xf32>, with a zero-size dimension; empty tensors are not supported

func.func @f(%x: tensor<0x2xf32>) -> tensor<0x2xf32> {
  func.return %x : tensor<0x2xf32>
}
