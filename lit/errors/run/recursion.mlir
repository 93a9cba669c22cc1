// RUN: rm -rf %t
// RUN: not nnlayout-run %s --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// CHECK: [[FILE]]:6:1: error: @f calls itself; recursion cannot be interpreted

func.func @f() -> tensor<2xf32> {
  %0 = func.call @f() : () -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
