// a hand-edited memory plan whose arena is too small; verify-memory-plan says the same
// RUN: rm -rf %t
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// CHECK: [[FILE]]:10:3: error: wrong memory plan: '%r' (bytes [0, 512), live from op 3 to op 5) leaves the arena of 16 bytes

func.func @f(%x: memref<1x8x4x4xf32>) -> memref<1x8x4x4xf32> {
  %arena = memref.alloc() {alignment = 64 : i64} : memref<16xi8>
  %o0 = arith.constant 0 : index
  %r = memref.view %arena[%o0][] : memref<16xi8> to memref<1x8x4x4xf32>
  nn.compute ins(%x : memref<1x8x4x4xf32>) outs(%r : memref<1x8x4x4xf32>) {
  ^bb0(%a: tensor<1x8x4x4xf32>):
    %y = nn.relu %a {kernel = #nn.kernel<"relu_ref", operands = [""], results = [""], in_place = 0>} : tensor<1x8x4x4xf32>
    nn.yield %y : tensor<1x8x4x4xf32>
  }
  %n = memref.alloc() {alignment = 64 : i64} : memref<1x8x4x4xf32>
  "memref.copy"(%r, %n) : (memref<1x8x4x4xf32>, memref<1x8x4x4xf32>) -> ()
  func.return %n : memref<1x8x4x4xf32>
}
