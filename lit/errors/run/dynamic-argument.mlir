// RUN: rm -rf %t
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s
// RUN: not test -e %t
// CHECK: error: argument 1 (%x): has type tensor<?x2xf32>; only statically shaped tensors and memrefs can be passed in

func.func @f(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  func.return %x : tensor<?x2xf32>
}
