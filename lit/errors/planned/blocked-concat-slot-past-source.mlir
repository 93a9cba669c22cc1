// avx2 (NCHW8c): a concat slot subview moved to channel block 2 of a concat of 2 blocks (its type kept consistent): past its source
// RUN: rm -rf %t %t.py %t.planned.mlir %t.mlir
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not nnlayout-run %s --random-inputs 0 --backend generated --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not nnlayout-translate %s -o %t.py 2>&1 | filecheck %s -DFILE %s
// RUN: not nnlayout-opt %s -p verify-memory-plan -o %t.mlir 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// RUN: not test -e %t.py
// RUN: not test -e %t.planned.mlir
// RUN: not test -e %t.mlir
// CHECK: [[FILE]]:51:5: error: {{(wrong memory plan: |verify-memory-plan: )?}}memref.subview: axis 1 takes elements 2 to 2 (offset 2, size 1, stride 1) of a source dimension of 2; a view must stay inside its source
// CHECK-NOT: Traceback
builtin.module attributes {nnlayout.target = "avx2", nnlayout.padding = true} {
  func.func @net(%x: memref<1x3x8x8xf32>) -> memref<1x8x8x8xf32> attributes {nnlayout.halo_copy_bytes_avoided = 6400 : i64, nnlayout.concat_copy_bytes_avoided = 4096 : i64, nnlayout.arena_bytes = 8192 : i64, nnlayout.lower_bound_bytes = 8192 : i64, nnlayout.unplanned_bytes = 15488 : i64, nnlayout.padding_bytes = 1152 : i64, nnlayout.halo_bytes = 1152 : i64} {
    %arena = memref.alloc() {alignment = 64 : i64} : memref<8192xi8>
    %w = nn.constant dense<5.000000e-01> : tensor<8x3x3x3xf32>
    %b = nn.constant dense<1.000000e-01> : tensor<8xf32>
    %offset = arith.constant 0 : index
    %c = memref.view %arena[%offset][] : memref<8192xi8> to memref<1x8x8x8xf32>
    nn.compute ins(%x, %w, %b : memref<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) outs(%c : memref<1x8x8x8xf32>) {
    ^bb0(%x_1: tensor<1x3x8x8xf32>, %w_1: tensor<8x3x3x3xf32>, %b_1: tensor<8xf32>):
      %c_1 = nn.conv2d %x_1, %w_1, %b_1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {kernel = #nn.kernel<"conv2d_ref", operands = ["", "", ""], results = [""]>} : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
      nn.yield %c_1 : tensor<1x8x8x8xf32>
    }
    %offset_1 = arith.constant 0 : index
    %r = memref.view %arena[%offset_1][] : memref<8192xi8> to memref<1x8x8x8xf32>
    nn.compute ins(%c : memref<1x8x8x8xf32>) outs(%r : memref<1x8x8x8xf32>) {
    ^bb0(%c_2: tensor<1x8x8x8xf32>):
      %r_1 = nn.relu %c_2 {kernel = #nn.kernel<"relu_any", operands = ["*"], results = ["*"], in_place = 0>} : tensor<1x8x8x8xf32>
      nn.yield %r_1 : tensor<1x8x8x8xf32>
    }
    %offset_2 = arith.constant 4096 : index
    %r_2 = memref.view %arena[%offset_2][] : memref<8192xi8> to memref<1x1x10x10x8xf32>
    layout.fill_border %r_2 axes [2, 3] halo [1, 1, 1, 1] value 0.000000e+00 : f32 : memref<1x1x10x10x8xf32>
    %r_3 = memref.subview %r_2[0, 0, 1, 1, 0] [1, 1, 8, 8, 8] [1, 1, 1, 1, 1] : memref<1x1x10x10x8xf32> to memref<1x1x8x8x8xf32, strided<[800, 800, 80, 8, 1], offset: 88>>
    nn.compute ins(%r : memref<1x8x8x8xf32>) outs(%r_3 : memref<1x1x8x8x8xf32, strided<[800, 800, 80, 8, 1], offset: 88>>) {
    ^bb0(%r_4: tensor<1x8x8x8xf32>):
      %r_5 = layout.reorder %r_4 : tensor<1x8x8x8xf32> -> tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>
      nn.yield %r_5 : tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>
    }
    %w2 = nn.constant dense<2.500000e-01> : tensor<8x8x3x3xf32> -> tensor<8x8x3x3xf32, #layout.layout<"IHW8iO8o">>
    %b_2 = nn.constant dense<1.000000e-01> : tensor<8xf32> -> tensor<8xf32, #layout.layout<"C8c">>
    %offset_3 = arith.constant 0 : index
    %cat = memref.view %arena[%offset_3][] : memref<8192xi8> to memref<1x2x8x8x8xf32>
    %c2 = memref.subview %cat[0, 0, 0, 0, 0] [1, 1, 8, 8, 8] [1, 1, 1, 1, 1] : memref<1x2x8x8x8xf32> to memref<1x1x8x8x8xf32, strided<[1024, 512, 64, 8, 1]>>
    nn.compute ins(%r_2, %w2, %b_2 : memref<1x1x10x10x8xf32>, tensor<8x8x3x3xf32, #layout.layout<"IHW8iO8o">>, tensor<8xf32, #layout.layout<"C8c">>) outs(%c2 : memref<1x1x8x8x8xf32, strided<[1024, 512, 64, 8, 1]>>) halo [1, 1, 1, 1] {
    ^bb0(%r_6: tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>, %w2_1: tensor<8x8x3x3xf32, #layout.layout<"IHW8iO8o">>, %b_3: tensor<8xf32, #layout.layout<"C8c">>):
      %c2_1 = nn.conv2d %r_6, %w2_1, %b_3 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {kernel = #nn.kernel<"conv2d_nchwc", operands = ["NCHW8c", "IHW8iO8o", "C8c"], results = ["NCHW8c"]>} : (tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>, tensor<8x8x3x3xf32, #layout.layout<"IHW8iO8o">>, tensor<8xf32, #layout.layout<"C8c">>) -> tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>
      nn.yield %c2_1 : tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>
    }
    %c3 = memref.subview %cat[0, 2, 0, 0, 0] [1, 1, 8, 8, 8] [1, 1, 1, 1, 1] : memref<1x2x8x8x8xf32> to memref<1x1x8x8x8xf32, strided<[1024, 512, 64, 8, 1], offset: 1024>>
    nn.compute ins(%r_2, %w2, %b_2 : memref<1x1x10x10x8xf32>, tensor<8x8x3x3xf32, #layout.layout<"IHW8iO8o">>, tensor<8xf32, #layout.layout<"C8c">>) outs(%c3 : memref<1x1x8x8x8xf32, strided<[1024, 512, 64, 8, 1], offset: 1024>>) halo [1, 1, 1, 1] {
    ^bb0(%r_7: tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>, %w2_2: tensor<8x8x3x3xf32, #layout.layout<"IHW8iO8o">>, %b_4: tensor<8xf32, #layout.layout<"C8c">>):
      %c3_1 = nn.conv2d %r_7, %w2_2, %b_4 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {kernel = #nn.kernel<"conv2d_nchwc", operands = ["NCHW8c", "IHW8iO8o", "C8c"], results = ["NCHW8c"]>} : (tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>, tensor<8x8x3x3xf32, #layout.layout<"IHW8iO8o">>, tensor<8xf32, #layout.layout<"C8c">>) -> tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>
      nn.yield %c3_1 : tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>
    }
    %offset_4 = arith.constant 4096 : index
    %cat_1 = memref.view %arena[%offset_4][] : memref<8192xi8> to memref<1x16x8x8xf32>
    nn.compute ins(%cat : memref<1x2x8x8x8xf32>) outs(%cat_1 : memref<1x16x8x8xf32>) {
    ^bb0(%cat_2: tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>):
      %cat_3 = layout.reorder %cat_2 : tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">> -> tensor<1x16x8x8xf32>
      nn.yield %cat_3 : tensor<1x16x8x8xf32>
    }
    %w4 = nn.constant dense<1.250000e-01> : tensor<8x16x1x1xf32>
    %c4 = memref.alloc() {alignment = 64 : i64} : memref<1x8x8x8xf32>
    nn.compute ins(%cat_1, %w4, %b : memref<1x16x8x8xf32>, tensor<8x16x1x1xf32>, tensor<8xf32>) outs(%c4 : memref<1x8x8x8xf32>) {
    ^bb0(%cat_4: tensor<1x16x8x8xf32>, %w4_1: tensor<8x16x1x1xf32>, %b_5: tensor<8xf32>):
      %c4_1 = nn.conv2d %cat_4, %w4_1, %b_5 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {kernel = #nn.kernel<"conv2d_ref", operands = ["", "", ""], results = [""]>} : (tensor<1x16x8x8xf32>, tensor<8x16x1x1xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
      nn.yield %c4_1 : tensor<1x8x8x8xf32>
    }
    func.return %c4 : memref<1x8x8x8xf32>
  }
}
