// Layouts, storages and layout.reorder print as they parse, in the pretty and the generic form.
// RUN: nnlayout-opt %s | nnlayout-opt | filecheck %s
// RUN: nnlayout-opt %s --print-op-generic > %t
// RUN: filecheck %s --check-prefix=GENERIC < %t
// RUN: nnlayout-opt %t | filecheck %s

func.func @reorders(%x: tensor<1x3x224x224xf32>, %w: tensor<64x3x7x7xf32>, %m: tensor<128x256xf32>) -> tensor<1x3x224x224xf32> {
  %0 = layout.reorder %x : tensor<1x3x224x224xf32> -> tensor<1x3x224x224xf32, #layout.layout<"NCHW16c">>
  %1 = layout.reorder %0 : tensor<1x3x224x224xf32, #layout.layout<"NCHW16c">> -> tensor<1x3x224x224xf32, #layout.layout<"NHWC">>
  %2 = layout.reorder %1 : tensor<1x3x224x224xf32, #layout.layout<"NHWC">> -> tensor<1x3x224x224xf32, #layout.layout<"NCHW">>
  %3 = layout.reorder %2 : tensor<1x3x224x224xf32, #layout.layout<"NCHW">> -> tensor<1x3x224x224xf32>
  %4 = layout.reorder %w : tensor<64x3x7x7xf32> -> tensor<64x3x7x7xf32, #layout.layout<"OIHW16i16o">>
  %5 = layout.reorder %w : tensor<64x3x7x7xf32> -> tensor<64x3x7x7xf32, #layout.layout<"OIHW8i16o2i">>
  %6 = layout.reorder %m : tensor<128x256xf32> -> tensor<128x256xf32, #layout.storage<"csr">>
  %7 = layout.reorder %6 : tensor<128x256xf32, #layout.storage<"csr">> -> tensor<128x256xf32, #layout.storage<"dense">>
  func.return %3 : tensor<1x3x224x224xf32>
}
// CHECK-LABEL: func.func @reorders
// CHECK:      %0 = layout.reorder %x : tensor<1x3x224x224xf32> -> tensor<1x3x224x224xf32, #layout.layout<"NCHW16c">>
// CHECK-NEXT: %1 = layout.reorder %0 : tensor<1x3x224x224xf32, #layout.layout<"NCHW16c">> -> tensor<1x3x224x224xf32, #layout.layout<"NHWC">>
// CHECK-NEXT: %2 = layout.reorder %1 : tensor<1x3x224x224xf32, #layout.layout<"NHWC">> -> tensor<1x3x224x224xf32, #layout.layout<"NCHW">>
// CHECK-NEXT: %3 = layout.reorder %2 : tensor<1x3x224x224xf32, #layout.layout<"NCHW">> -> tensor<1x3x224x224xf32>
// CHECK-NEXT: %4 = layout.reorder %w : tensor<64x3x7x7xf32> -> tensor<64x3x7x7xf32, #layout.layout<"OIHW16i16o">>
// CHECK-NEXT: %5 = layout.reorder %w : tensor<64x3x7x7xf32> -> tensor<64x3x7x7xf32, #layout.layout<"OIHW8i16o2i">>
// CHECK-NEXT: %6 = layout.reorder %m : tensor<128x256xf32> -> tensor<128x256xf32, #layout.storage<"csr">>
// CHECK-NEXT: %7 = layout.reorder %6 : tensor<128x256xf32, #layout.storage<"csr">> -> tensor<128x256xf32, #layout.storage<"dense">>
// GENERIC-LABEL: "func.func"() <{sym_name = "reorders"
// GENERIC:      %0 = "layout.reorder"(%x) : (tensor<1x3x224x224xf32>) -> tensor<1x3x224x224xf32, #layout.layout<"NCHW16c">>
// GENERIC:      %6 = "layout.reorder"(%m) : (tensor<128x256xf32>) -> tensor<128x256xf32, #layout.storage<"csr">>

// nn ops accept encoded operands; the encoding never changes the logical shape rule.
func.func @encoded(%x: tensor<1x3x8x8xf32, #layout.layout<"NCHW8c">>, %w: tensor<16x3x3x3xf32, #layout.layout<"OIHW8i8o">>, %s: tensor<4x8xf32, #layout.storage<"csr">>, %d: tensor<8x2xf32>) -> (tensor<1x16x6x6xf32, #layout.layout<"NCHW8c">>, tensor<4x2xf32>) {
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32, #layout.layout<"NCHW8c">>, tensor<16x3x3x3xf32, #layout.layout<"OIHW8i8o">>) -> tensor<1x16x6x6xf32, #layout.layout<"NCHW8c">>
  %1 = nn.relu %0 : tensor<1x16x6x6xf32, #layout.layout<"NCHW8c">>
  %2 = nn.matmul %s, %d : (tensor<4x8xf32, #layout.storage<"csr">>, tensor<8x2xf32>) -> tensor<4x2xf32>
  func.return %1, %2 : tensor<1x16x6x6xf32, #layout.layout<"NCHW8c">>, tensor<4x2xf32>
}
// CHECK-LABEL: func.func @encoded
// CHECK:      %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32, #layout.layout<"NCHW8c">>, tensor<16x3x3x3xf32, #layout.layout<"OIHW8i8o">>) -> tensor<1x16x6x6xf32, #layout.layout<"NCHW8c">>
// CHECK-NEXT: %1 = nn.relu %0 : tensor<1x16x6x6xf32, #layout.layout<"NCHW8c">>
// CHECK-NEXT: %2 = nn.matmul %s, %d : (tensor<4x8xf32, #layout.storage<"csr">>, tensor<8x2xf32>) -> tensor<4x2xf32>

// layout.fill_border writes the halo of a buffer (bufferized IR).
func.func @fill_border(%b: memref<1x2x10x10x8xf32>) {
  layout.fill_border %b axes [2, 3] halo [1, 1, 1, 1] value 0.0 : f32 : memref<1x2x10x10x8xf32>
  layout.fill_border %b axes [2, 3] halo [1, 0, 2, 0] value -3.5 : f32 : memref<1x2x10x10x8xf32>
  func.return
}
// CHECK-LABEL: func.func @fill_border
// CHECK:      layout.fill_border %b axes [2, 3] halo [1, 1, 1, 1] value 0.000000e+00 : f32 : memref<1x2x10x10x8xf32>
// CHECK-NEXT: layout.fill_border %b axes [2, 3] halo [1, 0, 2, 0] value -3.500000e+00 : f32 : memref<1x2x10x10x8xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "fill_border"
// GENERIC:      "layout.fill_border"(%b) <{axes = array<i64: 2, 3>, halo = array<i64: 1, 1, 1, 1>, value = 0.000000e+00 : f32}> : (memref<1x2x10x10x8xf32>) -> ()
