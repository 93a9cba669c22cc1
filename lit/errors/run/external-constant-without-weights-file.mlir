// the name is quoted as a JSON string: quotes and line breaks in it stay readable.
// RUN: rm -rf %t
// RUN: not nnlayout-run %s --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// CHECK: [[FILE]]:9:5: error: nn.constant: external constant "w\"1 ü" needs a weights file, but the module names none (module attribute nn.weights)

builtin.module {
  func.func @f() -> tensor<4x4xf32> {
    %0 = nn.constant external "w\"1 ü" : tensor<4x4xf32>
    func.return %0 : tensor<4x4xf32>
  }
}
