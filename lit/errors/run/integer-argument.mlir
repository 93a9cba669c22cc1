// RUN: rm -rf %t
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s
// RUN: not test -e %t
// CHECK: error: argument 1 (%x): element type i16 is not supported

func.func @f(%x: tensor<2xi16>) -> tensor<2xi16> {
  func.return %x : tensor<2xi16>
}
