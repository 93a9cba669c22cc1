// ARGS: -p plan-memory{svg="/nonexistent-dir/plan.svg"}
// ERROR: error: cannot write '/nonexistent-dir/plan.svg': no such file or directory
// NOTE: an output path, not the program, is wrong: no location (it was an internal error).
func.func @f(%x: memref<4xf32>) -> memref<4xf32> {
  func.return %x : memref<4xf32>
}
