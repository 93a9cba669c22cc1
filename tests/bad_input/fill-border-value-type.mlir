// ERROR: {file}:5:3: error: layout.fill_border: value 1e+300 : f64 is not of the buffer's element type f32
// NOTE: it was accepted, and the f32 buffer's border filled with inf.
func.func @f(%x: memref<1x1x6x6x8xf32>) {
  // the border of an f32 buffer given an f64 value
  layout.fill_border %x axes [2, 3] halo [1, 1, 1, 1] value 1.0e300 : f64 : memref<1x1x6x6x8xf32>
  func.return
}
