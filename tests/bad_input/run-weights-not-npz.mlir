// TOOL: nnlayout-run
// ERROR: {file}:5:5: error: weights file '{file}' is not an .npz archive
builtin.module attributes {nn.weights = "run-weights-not-npz.mlir"} {
  func.func @f() -> tensor<4x4xf32> {
    %0 = nn.constant external "w" : tensor<4x4xf32>
    func.return %0 : tensor<4x4xf32>
  }
}
