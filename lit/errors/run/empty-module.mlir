// RUN: rm -rf %t
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s
// RUN: not test -e %t
// CHECK: error: the module has no public function with a body to run

