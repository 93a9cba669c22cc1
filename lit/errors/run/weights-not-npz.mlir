// RUN: rm -rf %t
// RUN: not nnlayout-run %s --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// CHECK: [[FILE]]:8:5: error: weights file '[[FILE]]' is not an .npz archive

builtin.module attributes {nn.weights = "weights-not-npz.mlir"} {
  func.func @f() -> tensor<4x4xf32> {
    %0 = nn.constant external "w" : tensor<4x4xf32>
    func.return %0 : tensor<4x4xf32>
  }
}
