// the same with the result type left as it was
// RUN: rm -rf %t %t.py %t.planned.mlir %t.mlir
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not nnlayout-run %s --random-inputs 0 --backend generated --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not nnlayout-translate %s -o %t.py 2>&1 | filecheck %s -DFILE %s
// RUN: not nnlayout-opt %s -p verify-memory-plan -o %t.mlir 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// RUN: not test -e %t.py
// RUN: not test -e %t.planned.mlir
// RUN: not test -e %t.mlir
// CHECK: [[FILE]]:21:5: error: {{(wrong memory plan: |verify-memory-plan: )?}}memref.subview: offset -1 on axis 3; a view needs offsets >= 0, sizes >= 1 and strides >= 1
// CHECK-NOT: Traceback
builtin.module attributes {nnlayout.target = "ref", nnlayout.padding = true} {
  func.func @net(%x: memref<1x3x8x8xf32>) -> memref<1x8x8x8xf32> attributes {nnlayout.halo_copy_bytes_avoided = 6400 : i64, nnlayout.concat_copy_bytes_avoided = 4096 : i64, nnlayout.arena_bytes = 7296 : i64, nnlayout.lower_bound_bytes = 7296 : i64, nnlayout.unplanned_bytes = 7296 : i64, nnlayout.padding_bytes = 1152 : i64, nnlayout.halo_bytes = 1152 : i64} {
    %arena = memref.alloc() {alignment = 64 : i64} : memref<7296xi8>
    %w = nn.constant dense<5.000000e-01> : tensor<8x3x3x3xf32>
    %b = nn.constant dense<1.000000e-01> : tensor<8xf32>
    %offset = arith.constant 4096 : index
    %c = memref.view %arena[%offset][] : memref<7296xi8> to memref<1x8x10x10xf32>
    layout.fill_border %c axes [2, 3] halo [1, 1, 1, 1] value 0.000000e+00 : f32 : memref<1x8x10x10xf32>
    %r = memref.subview %c[0, 0, 1, -1] [1, 8, 8, 8] [1, 1, 1, 1] : memref<1x8x10x10xf32> to memref<1x8x8x8xf32, strided<[800, 100, 10, 1], offset: 11>>
    nn.compute ins(%x, %w, %b : memref<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) outs(%r : memref<1x8x8x8xf32, strided<[800, 100, 10, 1], offset: 11>>) {
    ^bb0(%x_1: tensor<1x3x8x8xf32>, %w_1: tensor<8x3x3x3xf32>, %b_1: tensor<8xf32>):
      %c_1 = nn.conv2d %x_1, %w_1, %b_1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {kernel = #nn.kernel<"conv2d_ref", operands = ["", "", ""], results = [""]>} : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
      nn.yield %c_1 : tensor<1x8x8x8xf32>
    }
    nn.compute ins(%r : memref<1x8x8x8xf32, strided<[800, 100, 10, 1], offset: 11>>) outs(%r : memref<1x8x8x8xf32, strided<[800, 100, 10, 1], offset: 11>>) {
    ^bb0(%c_2: tensor<1x8x8x8xf32>):
      %r_1 = nn.relu %c_2 {kernel = #nn.kernel<"relu_ref", operands = [""], results = [""], in_place = 0>} : tensor<1x8x8x8xf32>
      nn.yield %r_1 : tensor<1x8x8x8xf32>
    }
    %w2 = nn.constant dense<2.500000e-01> : tensor<8x8x3x3xf32>
    %offset_1 = arith.constant 0 : index
    %cat = memref.view %arena[%offset_1][] : memref<7296xi8> to memref<1x16x8x8xf32>
    %c2 = memref.subview %cat[0, 0, 0, 0] [1, 8, 8, 8] [1, 1, 1, 1] : memref<1x16x8x8xf32> to memref<1x8x8x8xf32, strided<[1024, 64, 8, 1]>>
    nn.compute ins(%c, %w2, %b : memref<1x8x10x10xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) outs(%c2 : memref<1x8x8x8xf32, strided<[1024, 64, 8, 1]>>) halo [1, 1, 1, 1] {
    ^bb0(%r_2: tensor<1x8x8x8xf32>, %w2_1: tensor<8x8x3x3xf32>, %b_2: tensor<8xf32>):
      %c2_1 = nn.conv2d %r_2, %w2_1, %b_2 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {kernel = #nn.kernel<"conv2d_ref", operands = ["", "", ""], results = [""]>} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
      nn.yield %c2_1 : tensor<1x8x8x8xf32>
    }
    %c3 = memref.subview %cat[0, 8, 0, 0] [1, 8, 8, 8] [1, 1, 1, 1] : memref<1x16x8x8xf32> to memref<1x8x8x8xf32, strided<[1024, 64, 8, 1], offset: 512>>
    nn.compute ins(%c, %w2, %b : memref<1x8x10x10xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) outs(%c3 : memref<1x8x8x8xf32, strided<[1024, 64, 8, 1], offset: 512>>) halo [1, 1, 1, 1] {
    ^bb0(%r_3: tensor<1x8x8x8xf32>, %w2_2: tensor<8x8x3x3xf32>, %b_3: tensor<8xf32>):
      %c3_1 = nn.conv2d %r_3, %w2_2, %b_3 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {kernel = #nn.kernel<"conv2d_ref", operands = ["", "", ""], results = [""]>} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
      nn.yield %c3_1 : tensor<1x8x8x8xf32>
    }
    %w4 = nn.constant dense<1.250000e-01> : tensor<8x16x1x1xf32>
    %c4 = memref.alloc() {alignment = 64 : i64} : memref<1x8x8x8xf32>
    nn.compute ins(%cat, %w4, %b : memref<1x16x8x8xf32>, tensor<8x16x1x1xf32>, tensor<8xf32>) outs(%c4 : memref<1x8x8x8xf32>) {
    ^bb0(%cat_1: tensor<1x16x8x8xf32>, %w4_1: tensor<8x16x1x1xf32>, %b_4: tensor<8xf32>):
      %c4_1 = nn.conv2d %cat_1, %w4_1, %b_4 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {kernel = #nn.kernel<"conv2d_ref", operands = ["", "", ""], results = [""]>} : (tensor<1x16x8x8xf32>, tensor<8x16x1x1xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
      nn.yield %c4_1 : tensor<1x8x8x8xf32>
    }
    func.return %c4 : memref<1x8x8x8xf32>
  }
}
