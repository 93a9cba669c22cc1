// RUN: not nnlayout-opt %s --split-input-file -p verify-memory-plan 2>&1 | filecheck %s
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics -p verify-memory-plan

// nnlayout-opt reports each chunk's error (filecheck: the first); --verify-diagnostics checks all.

// conv2d_ref writes its output over its input: same bytes, both live at the conv, and the
// kernel has no in_place.
func.func @conv_over_its_input(%x: memref<1x8x4x4xf32>) -> memref<1x8x4x4xf32> {
  %arena = memref.alloc() {alignment = 64 : i64} : memref<1024xi8>
  %w = nn.constant dense<1.000000e-01> : tensor<8x8x1x1xf32>
  %o0 = arith.constant 0 : index
  %r = memref.view %arena[%o0][] : memref<1024xi8> to memref<1x8x4x4xf32>
  nn.compute ins(%x : memref<1x8x4x4xf32>) outs(%r : memref<1x8x4x4xf32>) {
  ^bb0(%a: tensor<1x8x4x4xf32>):
    %y = nn.relu %a {kernel = #nn.kernel<"relu_ref", operands = [""], results = [""], in_place = 0>} : tensor<1x8x4x4xf32>
    nn.yield %y : tensor<1x8x4x4xf32>
  }
  %o1 = arith.constant 0 : index
  // expected-error @+1 {{'%c' (bytes [0, 512), live from op 7 to op 9) overlaps '%r' (bytes [0, 512), live from op 4 to op 7) while both are live}}
  %c = memref.view %arena[%o1][] : memref<1024xi8> to memref<1x8x4x4xf32>
  nn.compute ins(%r, %w : memref<1x8x4x4xf32>, tensor<8x8x1x1xf32>) outs(%c : memref<1x8x4x4xf32>) {
  ^bb0(%a: tensor<1x8x4x4xf32>, %b: tensor<8x8x1x1xf32>):
    %y = nn.conv2d %a, %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {kernel = #nn.kernel<"conv2d_ref", operands = ["", ""], results = [""]>} : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
    nn.yield %y : tensor<1x8x4x4xf32>
  }
  %n = memref.alloc() {alignment = 64 : i64} : memref<1x8x4x4xf32>
  "memref.copy"(%c, %n) : (memref<1x8x4x4xf32>, memref<1x8x4x4xf32>) -> ()
  func.return %n : memref<1x8x4x4xf32>
}
// CHECK: plan-memory-invalid.mlir:20:3: error: verify-memory-plan: '%c' (bytes [0, 512), live from op 7 to op 9) overlaps '%r' (bytes [0, 512), live from op 4 to op 7) while both are live
// CHECK-NEXT: %c = memref.view

// -----

// A view that runs past the end of the arena.
func.func @past_the_end(%x: memref<1x8x4x4xf32>) -> memref<1x8x4x4xf32> {
  %arena = memref.alloc() {alignment = 64 : i64} : memref<1024xi8>
  %o = arith.constant 640 : index
  // expected-error @+1 {{'%r' (bytes [640, 1152), live from op 3 to op 3) leaves the arena of 1024 bytes}}
  %r = memref.view %arena[%o][] : memref<1024xi8> to memref<1x8x4x4xf32>
  "memref.copy"(%x, %r) : (memref<1x8x4x4xf32>, memref<1x8x4x4xf32>) -> ()
  func.return %x : memref<1x8x4x4xf32>
}

// -----

// An offset that breaks the arena's alignment.
func.func @misaligned(%x: memref<1x8x4x4xf32>) -> memref<1x8x4x4xf32> {
  %arena = memref.alloc() {alignment = 64 : i64} : memref<1024xi8>
  %o = arith.constant 32 : index
  // expected-error @+1 {{starts at an offset that is not a multiple of the arena's alignment (64)}}
  %r = memref.view %arena[%o][] : memref<1024xi8> to memref<1x8x4x4xf32>
  "memref.copy"(%x, %r) : (memref<1x8x4x4xf32>, memref<1x8x4x4xf32>) -> ()
  func.return %x : memref<1x8x4x4xf32>
}

// -----

// The fused convolution may write over its addend (in_place = 3), but not when it also
// reads that buffer as its input: conv(r) + r would change r while the convolution reads it.
func.func @overwrites_what_it_also_reads(%x: memref<1x8x4x4xf32>) -> memref<1x8x4x4xf32> {
  %arena = memref.alloc() {alignment = 64 : i64} : memref<1024xi8>
  %w = nn.constant dense<1.000000e-01> : tensor<8x8x1x1xf32>
  %b = nn.constant dense<0.000000e+00> : tensor<8xf32>
  %o0 = arith.constant 0 : index
  %r = memref.view %arena[%o0][] : memref<1024xi8> to memref<1x8x4x4xf32>
  nn.compute ins(%x : memref<1x8x4x4xf32>) outs(%r : memref<1x8x4x4xf32>) {
  ^bb0(%a: tensor<1x8x4x4xf32>):
    %y = nn.relu %a {kernel = #nn.kernel<"relu_ref", operands = [""], results = [""], in_place = 0>} : tensor<1x8x4x4xf32>
    nn.yield %y : tensor<1x8x4x4xf32>
  }
  %o1 = arith.constant 0 : index
  // expected-error @+1 {{'%c' (bytes [0, 512), live from op 8 to op 10) overlaps '%r' (bytes [0, 512), live from op 5 to op 8) while both are live}}
  %c = memref.view %arena[%o1][] : memref<1024xi8> to memref<1x8x4x4xf32>
  nn.compute ins(%r, %w, %b, %r : memref<1x8x4x4xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>, memref<1x8x4x4xf32>) outs(%c : memref<1x8x4x4xf32>) {
  ^bb0(%a: tensor<1x8x4x4xf32>, %k: tensor<8x8x1x1xf32>, %bb: tensor<8xf32>, %s: tensor<1x8x4x4xf32>):
    %y = nn.fused_conv2d %a, %k, %bb add %s strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {kernel = #nn.kernel<"fused_conv2d_sum_onednn", operands = ["", "", "", ""], results = [""], in_place = 3>} : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    nn.yield %y : tensor<1x8x4x4xf32>
  }
  %n = memref.alloc() {alignment = 64 : i64} : memref<1x8x4x4xf32>
  "memref.copy"(%c, %n) : (memref<1x8x4x4xf32>, memref<1x8x4x4xf32>) -> ()
  func.return %n : memref<1x8x4x4xf32>
}

// -----

// A hand-edited arena figure: reports and benchmarks read it, so it must match the arena.
// expected-error @+1 {{'nnlayout.arena_bytes' is 512 : i64, but the function's arena allocates 1024 bytes}}
func.func @stale_arena_figure(%x: memref<1x8x4x4xf32>) -> memref<1x8x4x4xf32> attributes {nnlayout.arena_bytes = 512 : i64} {
  %arena = memref.alloc() {alignment = 64 : i64} : memref<1024xi8>
  %o = arith.constant 0 : index
  %r = memref.view %arena[%o][] : memref<1024xi8> to memref<1x8x4x4xf32>
  "memref.copy"(%x, %r) : (memref<1x8x4x4xf32>, memref<1x8x4x4xf32>) -> ()
  func.return %x : memref<1x8x4x4xf32>
}

// -----

// A halo'd buffer whose interior (written first) is overwritten by %w before it is read: the
// fill_border after the producer does not start a new value (its interior is not rewritten).
func.func @interior_clobbered_before_its_border(%x: memref<1x8x8x8xf32>) -> memref<1x8x8x8xf32> attributes {nnlayout.arena_bytes = 6400 : i64} {
  %arena = memref.alloc() {alignment = 64 : i64} : memref<6400xi8>
  %o0 = arith.constant 0 : index
  %v = memref.view %arena[%o0][] : memref<6400xi8> to memref<1x1x10x10x8xf32>
  %vi = memref.subview %v[0, 0, 1, 1, 0] [1, 1, 8, 8, 8] [1, 1, 1, 1, 1] : memref<1x1x10x10x8xf32> to memref<1x1x8x8x8xf32, strided<[800, 800, 80, 8, 1], offset: 88>>
  nn.compute ins(%x : memref<1x8x8x8xf32>) outs(%vi : memref<1x1x8x8x8xf32, strided<[800, 800, 80, 8, 1], offset: 88>>) {
  ^bb0(%a: tensor<1x8x8x8xf32>):
    %b = layout.reorder %a : tensor<1x8x8x8xf32> -> tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>
    nn.yield %b : tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>
  }
  // expected-error @+1 {{'%w' (bytes [0, 2048), live from op 6 to op 8) overlaps '%v' (bytes [0, 3200), live from op 4 to op 11) while both are live}}
  %w = memref.view %arena[%o0][] : memref<6400xi8> to memref<1x1x8x8x8xf32>
  nn.compute ins(%x : memref<1x8x8x8xf32>) outs(%w : memref<1x1x8x8x8xf32>) {
  ^bb0(%a: tensor<1x8x8x8xf32>):
    %b = layout.reorder %a : tensor<1x8x8x8xf32> -> tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>
    nn.yield %b : tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>
  }
  %t = memref.alloc() {alignment = 64 : i64} : memref<1x8x8x8xf32>
  nn.compute ins(%w : memref<1x1x8x8x8xf32>) outs(%t : memref<1x8x8x8xf32>) {
  ^bb0(%a: tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>):
    %b = layout.reorder %a : tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">> -> tensor<1x8x8x8xf32>
    nn.yield %b : tensor<1x8x8x8xf32>
  }
  layout.fill_border %v axes [2, 3] halo [1, 1, 1, 1] value 0.000000e+00 : f32 : memref<1x1x10x10x8xf32>
  %r = memref.alloc() {alignment = 64 : i64} : memref<1x8x8x8xf32>
  nn.compute ins(%vi : memref<1x1x8x8x8xf32, strided<[800, 800, 80, 8, 1], offset: 88>>) outs(%r : memref<1x8x8x8xf32>) {
  ^bb0(%a: tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>):
    %b = layout.reorder %a : tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">> -> tensor<1x8x8x8xf32>
    nn.yield %b : tensor<1x8x8x8xf32>
  }
  func.return %r : memref<1x8x8x8xf32>
}

// -----

// A pattern of the user's replaced a relu that plan-memory put in place (relu_ref's in_place
// = 0) by one without a kernel, after the plan: the overlap names the op that lost its rule.
func.func @in_place_op_replaced_after_the_plan(%x: memref<1x8x4x4xf32>) -> memref<1x8x4x4xf32> {
  %arena = memref.alloc() {alignment = 64 : i64} : memref<1024xi8>
  %o0 = arith.constant 0 : index
  %r = memref.view %arena[%o0][] : memref<1024xi8> to memref<1x8x4x4xf32>
  nn.compute ins(%x : memref<1x8x4x4xf32>) outs(%r : memref<1x8x4x4xf32>) {
  ^bb0(%a: tensor<1x8x4x4xf32>):
    %y = nn.relu %a {kernel = #nn.kernel<"relu_ref", operands = [""], results = [""], in_place = 0>} : tensor<1x8x4x4xf32>
    nn.yield %y : tensor<1x8x4x4xf32>
  }
  %o1 = arith.constant 0 : index
  // expected-error @+1 {{'%c' (bytes [0, 512), live from op 6 to op 8) overlaps '%r' (bytes [0, 512), live from op 3 to op 6) while both are live; nn.relu (op 6) writes one over the other and has no #nn.kernel, so no in-place rule allows it (an op made after select-dispatch gets none: make it before)}}
  %c = memref.view %arena[%o1][] : memref<1024xi8> to memref<1x8x4x4xf32>
  nn.compute ins(%r : memref<1x8x4x4xf32>) outs(%c : memref<1x8x4x4xf32>) {
  ^bb0(%a: tensor<1x8x4x4xf32>):
    %y = nn.relu %a : tensor<1x8x4x4xf32>
    nn.yield %y : tensor<1x8x4x4xf32>
  }
  %n = memref.alloc() {alignment = 64 : i64} : memref<1x8x4x4xf32>
  "memref.copy"(%c, %n) : (memref<1x8x4x4xf32>, memref<1x8x4x4xf32>) -> ()
  func.return %n : memref<1x8x4x4xf32>
}
