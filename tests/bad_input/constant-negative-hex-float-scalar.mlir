// ERROR: {file}:4:23: error: a hexadecimal float literal gives the value's bits; it cannot be negative
// NOTE: xDSL read it as the value -2139095040.0 (MLIR refuses it too).
func.func @f() {
  %c = arith.constant -0x7F800000 : f32
  func.return
}
