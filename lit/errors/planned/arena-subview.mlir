// a subview of the arena itself, written while a view over the same bytes is live (found by a helper's review): the interpreter gave a wrong result, the plan check accepted it, the generated module failed with a misleading message
// RUN: rm -rf %t %t.py %t.planned.mlir %t.mlir
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not nnlayout-run %s --random-inputs 0 --backend generated --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not nnlayout-translate %s -o %t.py 2>&1 | filecheck %s -DFILE %s
// RUN: not nnlayout-opt %s -p verify-memory-plan -o %t.mlir 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// RUN: not test -e %t.py
// RUN: not test -e %t.planned.mlir
// RUN: not test -e %t.mlir
// CHECK: [[FILE]]:25:5: error: {{(wrong memory plan: |verify-memory-plan: )?}}memref.subview uses the arena itself; only memref.view may address its bytes, so that the plan's byte ranges can be checked
// CHECK-NOT: Traceback

builtin.module attributes {nnlayout.target = "ref", nnlayout.padding = true} {
  func.func @main(%x: memref<6xf32>) -> memref<6xi8> attributes {nnlayout.halo_copy_bytes_avoided = 0 : i64, nnlayout.concat_copy_bytes_avoided = 0 : i64, nnlayout.view_copy_bytes_avoided = 0 : i64, nnlayout.arena_bytes = 128 : i64, nnlayout.lower_bound_bytes = 128 : i64, nnlayout.unplanned_bytes = 72 : i64, nnlayout.padding_bytes = 0 : i64, nnlayout.halo_bytes = 0 : i64, nnlayout.constant_bytes = 0 : i64, nnlayout.packed_bytes = 0 : i64, nnlayout.packed_plain_bytes = 0 : i64, nnlayout.compensation_bytes = 0 : i64, nnlayout.released_bytes = 0 : i64} {
    %arena = memref.alloc() {alignment = 64 : i64} : memref<128xi8>
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %r = memref.view %arena[%c0][] : memref<128xi8> to memref<6xf32>
    nn.compute ins(%x : memref<6xf32>) outs(%r : memref<6xf32>) {
    ^bb0(%x_1: tensor<6xf32>):
      %r_1 = nn.relu %x_1 {kernel = #nn.kernel<"relu_ref", operands = [""], results = [""], in_place = 0>} : tensor<6xf32>
      nn.yield %r_1 : tensor<6xf32>
    }
    %as = memref.subview %arena[0] [6] [1] : memref<128xi8> to memref<6xi8, strided<[1]>>
    nn.compute ins(%r : memref<6xf32>) outs(%as : memref<6xi8, strided<[1]>>) {
    ^bb0(%s_9: tensor<6xf32>):
      %q_9 = nn.quantize %s_9 {kernel = #nn.kernel<"quantize_ref", operands = [""], results = [""]>, y_scale = dense<5.000000e-01> : tensor<f32>, y_zero_point = dense<3> : tensor<i8>} : tensor<6xf32> -> tensor<6xi8>
      nn.yield %q_9 : tensor<6xi8>
    }
    %t = memref.view %arena[%c64][] : memref<128xi8> to memref<6xf32>
    nn.compute ins(%r : memref<6xf32>) outs(%t : memref<6xf32>) {
    ^bb0(%r_2: tensor<6xf32>):
      %t_1 = nn.tanh %r_2 {kernel = #nn.kernel<"tanh_ref", operands = [""], results = [""], in_place = 0>} : tensor<6xf32>
      nn.yield %t_1 : tensor<6xf32>
    }
    %s = memref.view %arena[%c64][] : memref<128xi8> to memref<6xf32>
    nn.compute ins(%t, %r : memref<6xf32>, memref<6xf32>) outs(%s : memref<6xf32>) {
    ^bb0(%t_2: tensor<6xf32>, %r_3: tensor<6xf32>):
      %s_1 = nn.add %t_2, %r_3 {kernel = #nn.kernel<"add_ref", operands = ["", ""], results = [""], in_place = 0>} : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
      nn.yield %s_1 : tensor<6xf32>
    }
    %q = memref.alloc() {alignment = 64 : i64} : memref<6xi8>
    nn.compute ins(%s : memref<6xf32>) outs(%q : memref<6xi8>) {
    ^bb0(%s_2: tensor<6xf32>):
      %q_1 = nn.quantize %s_2 {kernel = #nn.kernel<"quantize_ref", operands = [""], results = [""]>, y_scale = dense<5.000000e-01> : tensor<f32>, y_zero_point = dense<3> : tensor<i8>} : tensor<6xf32> -> tensor<6xi8>
      nn.yield %q_1 : tensor<6xi8>
    }
    func.return %q : memref<6xi8>
  }
}
