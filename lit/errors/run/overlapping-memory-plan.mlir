// a plan edited so that the pool's result overwrites its own source: the interpreter ran it and returned wrong numbers
// RUN: rm -rf %t
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// CHECK: [[FILE]]:35:5: error: wrong memory plan: '%p' (bytes [3328, 3840), live from op 15 to op 18) overlaps '%s' (bytes [3200, 5248), live from op 12 to op 15) while both are live

builtin.module {
  func.func @f(%x: memref<1x8x8x8xf32>) -> memref<1x8x4x4xf32> attributes {nnlayout.halo_copy_bytes_avoided = 3200 : i64, nnlayout.concat_copy_bytes_avoided = 0 : i64, nnlayout.arena_bytes = 5248 : i64, nnlayout.lower_bound_bytes = 5248 : i64, nnlayout.unplanned_bytes = 8320 : i64, nnlayout.padding_bytes = 1152 : i64, nnlayout.halo_bytes = 1152 : i64} {
    %arena = memref.alloc() {alignment = 64 : i64} : memref<5248xi8>
    %offset = arith.constant 0 : index
    %x_1 = memref.view %arena[%offset][] : memref<5248xi8> to memref<1x1x10x10x8xf32>
    layout.fill_border %x_1 axes [2, 3] halo [1, 1, 1, 1] value 0.000000e+00 : f32 : memref<1x1x10x10x8xf32>
    %x_2 = memref.subview %x_1[0, 0, 1, 1, 0] [1, 1, 8, 8, 8] [1, 1, 1, 1, 1] : memref<1x1x10x10x8xf32> to memref<1x1x8x8x8xf32, strided<[800, 800, 80, 8, 1], offset: 88>>
    nn.compute ins(%x : memref<1x8x8x8xf32>) outs(%x_2 : memref<1x1x8x8x8xf32, strided<[800, 800, 80, 8, 1], offset: 88>>) {
    ^bb0(%x_3: tensor<1x8x8x8xf32>):
      %x_4 = layout.reorder %x_3 : tensor<1x8x8x8xf32> -> tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>
      nn.yield %x_4 : tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>
    }
    %w = nn.constant dense<5.000000e-02> : tensor<8x8x3x3xf32> -> tensor<8x8x3x3xf32, #layout.layout<"IHW8iO8o">>
    %offset_1 = arith.constant 3200 : index
    %c = memref.view %arena[%offset_1][] : memref<5248xi8> to memref<1x1x8x8x8xf32>
    nn.compute ins(%x_1, %w : memref<1x1x10x10x8xf32>, tensor<8x8x3x3xf32, #layout.layout<"IHW8iO8o">>) outs(%c : memref<1x1x8x8x8xf32>) halo [1, 1, 1, 1] {
    ^bb0(%x_5: tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>, %w_1: tensor<8x8x3x3xf32, #layout.layout<"IHW8iO8o">>):
      %c_1 = nn.conv2d %x_5, %w_1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {kernel = #nn.kernel<"conv2d_nchwc", operands = ["NCHW8c", "IHW8iO8o"], results = ["NCHW8c"]>} : (tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>, tensor<8x8x3x3xf32, #layout.layout<"IHW8iO8o">>) -> tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>
      nn.yield %c_1 : tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>
    }
    %offset_2 = arith.constant 3200 : index
    %s = memref.view %arena[%offset_2][] : memref<5248xi8> to memref<1x1x8x8x8xf32>
    nn.compute ins(%c : memref<1x1x8x8x8xf32>) outs(%s : memref<1x1x8x8x8xf32>) {
    ^bb0(%c_2: tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>):
      %s_1 = nn.sigmoid %c_2 {kernel = #nn.kernel<"sigmoid_any", operands = ["*"], results = ["*"], in_place = 0>} : tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>
      nn.yield %s_1 : tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>
    }
    %offset_3 = arith.constant 3328 : index
    %p = memref.view %arena[%offset_3][] : memref<5248xi8> to memref<1x1x4x4x8xf32>
    nn.compute ins(%s : memref<1x1x8x8x8xf32>) outs(%p : memref<1x1x4x4x8xf32>) {
    ^bb0(%s_2: tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>):
      %p_1 = nn.max_pool2d %s_2 kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] {kernel = #nn.kernel<"max_pool2d_any", operands = ["*"], results = ["*"]>} : tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">> -> tensor<1x8x4x4xf32, #layout.layout<"NCHW8c">>
      nn.yield %p_1 : tensor<1x8x4x4xf32, #layout.layout<"NCHW8c">>
    }
    %offset_4 = arith.constant 0 : index
    %t = memref.view %arena[%offset_4][] : memref<5248xi8> to memref<1x1x4x4x8xf32>
    nn.compute ins(%p : memref<1x1x4x4x8xf32>) outs(%t : memref<1x1x4x4x8xf32>) {
    ^bb0(%p_2: tensor<1x8x4x4xf32, #layout.layout<"NCHW8c">>):
      %t_1 = nn.tanh %p_2 {kernel = #nn.kernel<"tanh_any", operands = ["*"], results = ["*"], in_place = 0>} : tensor<1x8x4x4xf32, #layout.layout<"NCHW8c">>
      nn.yield %t_1 : tensor<1x8x4x4xf32, #layout.layout<"NCHW8c">>
    }
    %t_2 = memref.alloc() {alignment = 64 : i64} : memref<1x8x4x4xf32>
    nn.compute ins(%t : memref<1x1x4x4x8xf32>) outs(%t_2 : memref<1x8x4x4xf32>) {
    ^bb0(%t_3: tensor<1x8x4x4xf32, #layout.layout<"NCHW8c">>):
      %t_4 = layout.reorder %t_3 : tensor<1x8x4x4xf32, #layout.layout<"NCHW8c">> -> tensor<1x8x4x4xf32>
      nn.yield %t_4 : tensor<1x8x4x4xf32>
    }
    func.return %t_2 : memref<1x8x4x4xf32>
  }
}
