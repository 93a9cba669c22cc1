// default-pipeline{target=avx2} output with its arena shrunk by hand
// RUN: rm -rf %t
// RUN: not nnlayout-run %s --random-inputs 0 --backend generated --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// CHECK: [[FILE]]:11:5: error: wrong memory plan: '%x' (bytes [9216, 15616), live from op 3 to op 17) leaves the arena of 1024 bytes

builtin.module {
  func.func @f(%x: memref<1x16x8x8xf32>, %w: memref<16x16x3x3xf32>) -> memref<1x16x8x8xf32> attributes {nnlayout.halo_copy_bytes_avoided = 6400 : i64, nnlayout.concat_copy_bytes_avoided = 0 : i64, nnlayout.arena_bytes = 19712 : i64, nnlayout.lower_bound_bytes = 19712 : i64, nnlayout.unplanned_bytes = 27904 : i64, nnlayout.padding_bytes = 2304 : i64, nnlayout.halo_bytes = 2304 : i64} {
    %arena = memref.alloc() {alignment = 64 : i64} : memref<1024xi8>
    %offset = arith.constant 9216 : index
    %x_1 = memref.view %arena[%offset][] : memref<1024xi8> to memref<1x2x10x10x8xf32>
    layout.fill_border %x_1 axes [2, 3] halo [1, 1, 1, 1] value 0.000000e+00 : f32 : memref<1x2x10x10x8xf32>
    %x_2 = memref.subview %x_1[0, 0, 1, 1, 0] [1, 2, 8, 8, 8] [1, 1, 1, 1, 1] : memref<1x2x10x10x8xf32> to memref<1x2x8x8x8xf32, strided<[1600, 800, 80, 8, 1], offset: 88>>
    nn.compute ins(%x : memref<1x16x8x8xf32>) outs(%x_2 : memref<1x2x8x8x8xf32, strided<[1600, 800, 80, 8, 1], offset: 88>>) {
    ^bb0(%x_3: tensor<1x16x8x8xf32>):
      %x_4 = layout.reorder %x_3 : tensor<1x16x8x8xf32> -> tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>
      nn.yield %x_4 : tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>
    }
    %offset_1 = arith.constant 0 : index
    %w_1 = memref.view %arena[%offset_1][] : memref<1024xi8> to memref<2x3x3x8x2x8xf32>
    nn.compute ins(%w : memref<16x16x3x3xf32>) outs(%w_1 : memref<2x3x3x8x2x8xf32>) {
    ^bb0(%w_2: tensor<16x16x3x3xf32>):
      %w_3 = layout.reorder %w_2 : tensor<16x16x3x3xf32> -> tensor<16x16x3x3xf32, #layout.layout<"IHW8iO8o">>
      nn.yield %w_3 : tensor<16x16x3x3xf32, #layout.layout<"IHW8iO8o">>
    }
    %offset_2 = arith.constant 15616 : index
    %0 = memref.view %arena[%offset_2][] : memref<1024xi8> to memref<1x2x8x8x8xf32>
    nn.compute ins(%x_1, %w_1 : memref<1x2x10x10x8xf32>, memref<2x3x3x8x2x8xf32>) outs(%0 : memref<1x2x8x8x8xf32>) halo [1, 1, 1, 1] {
    ^bb0(%x_5: tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>, %w_4: tensor<16x16x3x3xf32, #layout.layout<"IHW8iO8o">>):
      %1 = nn.conv2d %x_5, %w_4 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {kernel = #nn.kernel<"conv2d_nchwc", operands = ["NCHW8c", "IHW8iO8o"], results = ["NCHW8c"]>} : (tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>, tensor<16x16x3x3xf32, #layout.layout<"IHW8iO8o">>) -> tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>
      nn.yield %1 : tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>
    }
    %offset_3 = arith.constant 15616 : index
    %2 = memref.view %arena[%offset_3][] : memref<1024xi8> to memref<1x2x8x8x8xf32>
    nn.compute ins(%0 : memref<1x2x8x8x8xf32>) outs(%2 : memref<1x2x8x8x8xf32>) {
    ^bb0(%3: tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>):
      %4 = nn.relu %3 {kernel = #nn.kernel<"relu_any", operands = ["*"], results = ["*"], in_place = 0>} : tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>
      nn.yield %4 : tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>
    }
    %offset_4 = arith.constant 15616 : index
    %5 = memref.view %arena[%offset_4][] : memref<1024xi8> to memref<1x2x8x8x8xf32>
    nn.compute ins(%2, %x_2 : memref<1x2x8x8x8xf32>, memref<1x2x8x8x8xf32, strided<[1600, 800, 80, 8, 1], offset: 88>>) outs(%5 : memref<1x2x8x8x8xf32>) {
    ^bb0(%6: tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>, %x_6: tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>):
      %7 = nn.add %6, %x_6 {kernel = #nn.kernel<"add_any", operands = ["*", "*"], results = ["*"], in_place = 0>} : (tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>, tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>) -> tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>
      nn.yield %7 : tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>
    }
    %8 = memref.alloc() {alignment = 64 : i64} : memref<1x16x8x8xf32>
    nn.compute ins(%5 : memref<1x2x8x8x8xf32>) outs(%8 : memref<1x16x8x8xf32>) {
    ^bb0(%9: tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">>):
      %10 = layout.reorder %9 : tensor<1x16x8x8xf32, #layout.layout<"NCHW8c">> -> tensor<1x16x8x8xf32>
      nn.yield %10 : tensor<1x16x8x8xf32>
    }
    func.return %8 : memref<1x16x8x8xf32>
  }
}
