// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=ref},bufferize' | filecheck %s

// A layout.reorder between two layouts that put every element at the same byte, without
// padding lanes (NHWC and NCHW16c at 16 channels; plain and NCHW16c at one pixel), is a view
// of its operand's buffer (lowering/views.py, dialects/layout.py `same_bytes`): a
// memref.reinterpret_cast to the result's buffer shape, no nn.compute. A reorder that moves
// elements (32 channels: two blocks) stays a copy.
func.func @same_bytes(%x: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %r = nn.relu %x : tensor<1x16x4x4xf32>
  %a = layout.reorder %r : tensor<1x16x4x4xf32> -> tensor<1x16x4x4xf32, #layout.layout<"NHWC">>
  %b = layout.reorder %a : tensor<1x16x4x4xf32, #layout.layout<"NHWC">> -> tensor<1x16x4x4xf32, #layout.layout<"NCHW16c">>
  %d = layout.reorder %b : tensor<1x16x4x4xf32, #layout.layout<"NCHW16c">> -> tensor<1x16x4x4xf32>
  func.return %d : tensor<1x16x4x4xf32>
}
// CHECK-LABEL: func.func @same_bytes
// CHECK-SAME:  nnlayout.view_copy_bytes_avoided = 1024 : i64
// CHECK:       %a = memref.alloc() {alignment = 64 : i64} : memref<1x4x4x16xf32>
// CHECK:       layout.reorder %{{.*}} -> tensor<1x16x4x4xf32, #layout.layout<"NHWC">>
// CHECK:       %b = memref.reinterpret_cast %a to offset: [0], sizes: [1, 1, 4, 4, 16], strides: [256, 256, 64, 16, 1] : memref<1x4x4x16xf32> to memref<1x1x4x4x16xf32>
// CHECK-NEXT:  %d = memref.alloc() {alignment = 64 : i64} : memref<1x16x4x4xf32>
// CHECK-NEXT:  nn.compute ins(%b : memref<1x1x4x4x16xf32>) outs(%d : memref<1x16x4x4xf32>)

// -----

func.func @one_pixel_and_two_blocks(%x: tensor<1x32x1x1xf32>, %y: tensor<1x32x2x2xf32>) -> (tensor<1x32x1x1xf32>, tensor<1x32x2x2xf32>) {
  %r = nn.relu %x : tensor<1x32x1x1xf32>
  %a = layout.reorder %r : tensor<1x32x1x1xf32> -> tensor<1x32x1x1xf32, #layout.layout<"NCHW16c">>
  %b = layout.reorder %a : tensor<1x32x1x1xf32, #layout.layout<"NCHW16c">> -> tensor<1x32x1x1xf32, #layout.layout<"NHWC">>
  %c = nn.relu %b : tensor<1x32x1x1xf32, #layout.layout<"NHWC">>
  %s = nn.relu %y : tensor<1x32x2x2xf32>
  %t = layout.reorder %s : tensor<1x32x2x2xf32> -> tensor<1x32x2x2xf32, #layout.layout<"NHWC">>
  %u = layout.reorder %t : tensor<1x32x2x2xf32, #layout.layout<"NHWC">> -> tensor<1x32x2x2xf32, #layout.layout<"NCHW16c">>
  %v = nn.relu %u : tensor<1x32x2x2xf32, #layout.layout<"NCHW16c">>
  %e = layout.reorder %c : tensor<1x32x1x1xf32, #layout.layout<"NHWC">> -> tensor<1x32x1x1xf32>
  %w = layout.reorder %v : tensor<1x32x2x2xf32, #layout.layout<"NCHW16c">> -> tensor<1x32x2x2xf32>
  func.return %e, %w : tensor<1x32x1x1xf32>, tensor<1x32x2x2xf32>
}
// CHECK-LABEL: func.func @one_pixel_and_two_blocks
// CHECK:       %a = memref.reinterpret_cast %r to offset: [0], sizes: [1, 2, 1, 1, 16], strides: [32, 16, 16, 16, 1] : memref<1x32x1x1xf32> to memref<1x2x1x1x16xf32>
// CHECK-NEXT:  %b = memref.reinterpret_cast %a to offset: [0], sizes: [1, 1, 1, 32], strides: [32, 32, 32, 1] : memref<1x2x1x1x16xf32> to memref<1x1x1x32xf32>
// CHECK:       %u = memref.alloc() {alignment = 64 : i64} : memref<1x2x2x2x16xf32>
// CHECK-NEXT:  nn.compute ins(%t : memref<1x2x2x32xf32>) outs(%u : memref<1x2x2x2x16xf32>)
// CHECK:       layout.reorder %{{.*}} -> tensor<1x32x2x2xf32, #layout.layout<"NCHW16c">>
