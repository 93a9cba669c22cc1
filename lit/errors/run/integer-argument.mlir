// RUN: rm -rf %t
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s
// RUN: not test -e %t
// CHECK: error: argument 1 (%x): element type i32 is not supported

func.func @f(%x: tensor<2xi32>) -> tensor<2xi32> {
  func.return %x : tensor<2xi32>
}
