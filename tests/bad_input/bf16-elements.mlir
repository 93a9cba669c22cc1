// ERROR: {file}:4:3: error: nn.relu: operand 0 has element type bf16; nn ops compute on f16, f32 or f64
// NOTE: it compiled through default-pipeline, and then no tool could run it.
func.func @f(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = nn.relu %x : tensor<4xbf16>
  func.return %0 : tensor<4xbf16>
}
