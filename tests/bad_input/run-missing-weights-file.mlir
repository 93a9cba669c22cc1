// TOOL: nnlayout-run
// ERROR: {file}:5:5: error: cannot read weights file '{dir}/no-such-weights.npz': no such file or directory
builtin.module attributes {nn.weights = "no-such-weights.npz"} {
  func.func @f() -> tensor<4x4xf32> {
    %0 = nn.constant external "w" : tensor<4x4xf32>
    func.return %0 : tensor<4x4xf32>
  }
}
