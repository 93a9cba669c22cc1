// ERROR: {file}:4:3: error: nn.clip: max is NaN; a bound must be a number (leave it out for none)
// NOTE: numpy's clip would give NaN everywhere and oneDNN's eltwise clip refuses such a bound.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.clip %x min 0.0 max 0x7FC00000 : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
