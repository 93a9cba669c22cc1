// NOTE: xDSL's string pattern backtracked exponentially here: the tool ran for minutes
// ERROR: {file}:4:13: error: End of file reached before closing string literal.
builtin.module {
  func.func "main(%x: tensor<2x33x11x9xf32>) -> tensor<2x33x11x9xf32> attributes {a = 1} {
    func.return %x : tensor<2x33x11x9xf32>
  }
}
