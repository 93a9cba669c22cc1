// ERROR: {file}:3:1: error: Unexpected character U+FEFF
// NOTE: a byte-order mark (U+FEFF) where a token starts, here the first one; xDSL's message names the invisible character
﻿func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
