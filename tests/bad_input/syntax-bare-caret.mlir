// ERROR: {file}:4:1: error: expected a name or a number after '^' (e.g. ^bb0)
func.func @f() {
  func.return
^ :
}
