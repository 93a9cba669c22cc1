// a view of a subview of the arena ended in an internal error (the runners checked only views of an arena)
// RUN: rm -rf %t
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// CHECK: [[FILE]]:11:3: error: wrong memory plan: the view's source must be an arena (a memref.alloc in the function's body) for its plan to be checked

func.func @f(%x: memref<1x8x4x4xf32>) -> memref<1x8x4x4xf32> attributes {nnlayout.arena_bytes = 1024 : i64} {
  %arena = memref.alloc() {alignment = 64 : i64} : memref<1024xi8>
  %s = memref.subview %arena[0] [64] [1] : memref<1024xi8> to memref<64xi8>
  %o0 = arith.constant 0 : index
  %r = memref.view %s[%o0][] : memref<64xi8> to memref<1x8x4x4xf32>
  nn.compute ins(%x : memref<1x8x4x4xf32>) outs(%r : memref<1x8x4x4xf32>) {
  ^bb0(%q: tensor<1x8x4x4xf32>):
    %y = nn.relu %q {kernel = #nn.kernel<"relu_ref", operands = [""], results = [""], in_place = 0>} : tensor<1x8x4x4xf32>
    nn.yield %y : tensor<1x8x4x4xf32>
  }
  %n = memref.alloc() {alignment = 64 : i64} : memref<1x8x4x4xf32>
  "memref.copy"(%r, %n) : (memref<1x8x4x4xf32>, memref<1x8x4x4xf32>) -> ()
  func.return %n : memref<1x8x4x4xf32>
}
