// TOOL: nnlayout-run
// ERROR: {file}:6:5: error: nn.constant: external constant "w\"1 ü" needs a weights file, but the module names none (module attribute nn.weights)
// NOTE: the name is quoted as a JSON string: quotes and line breaks in it stay readable.
builtin.module {
  func.func @f() -> tensor<4x4xf32> {
    %0 = nn.constant external "w\"1 ü" : tensor<4x4xf32>
    func.return %0 : tensor<4x4xf32>
  }
}
