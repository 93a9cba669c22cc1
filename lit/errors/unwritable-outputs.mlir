// Outputs that cannot be written: a path, not the program, is wrong, so the error has no
// location (the plan's SVG was an internal error).
// RUN: not nnlayout-opt %s -o / 2>&1 | filecheck %s --check-prefix=OUTPUT
// RUN: not nnlayout-opt %s -p 'plan-memory{svg="/nonexistent-dir/plan.svg"}' 2>&1 | filecheck %s --check-prefix=SVG

func.func @f(%x: memref<4xf32>) -> memref<4xf32> {
  func.return %x : memref<4xf32>
}

// OUTPUT: error: cannot write '/': is a directory
// SVG: error: cannot write '/nonexistent-dir/plan.svg': no such file or directory
