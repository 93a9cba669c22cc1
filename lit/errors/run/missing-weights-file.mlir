// RUN: rm -rf %t
// RUN: not nnlayout-run %s --output-dir %t 2>&1 | filecheck %s -DFILE %s -DDIR %S
// RUN: not test -e %t
// CHECK: [[FILE]]:8:5: error: cannot read weights file '[[DIR]]/no-such-weights.npz': no such file or directory

builtin.module attributes {nn.weights = "no-such-weights.npz"} {
  func.func @f() -> tensor<4x4xf32> {
    %0 = nn.constant external "w" : tensor<4x4xf32>
    func.return %0 : tensor<4x4xf32>
  }
}
