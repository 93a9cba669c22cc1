// fold-constants: a reorder of an nn.constant becomes a constant of the reordered type (packed
// once, at load); the original stays while other ops use it; a reorder of a constant
// expression stays. The program computes the same before and after.
// RUN: nnlayout-opt %s --split-input-file -p fold-constants | filecheck %s
// RUN: nnlayout-run %s --entry inline --random-inputs 0 --output-dir %t.before > %t.txt
// RUN: nnlayout-opt %s -p fold-constants | nnlayout-run - --entry inline --random-inputs 0 --output-dir %t.after >> %t.txt
// RUN: filecheck %s --check-prefix=SAME < %t.txt

// SAME:      result0: [1, 8, 4, 4] float32 sum={{[-0-9.]+}} crc32=[[CRC:[0-9a-f]+]]
// SAME-NEXT: result0: [1, 8, 4, 4] float32 sum={{[-0-9.]+}} crc32=[[CRC]]

// CHECK-LABEL: func.func @inline
// CHECK-NEXT:    %w = nn.constant dense<5.000000e-01> : tensor<8x8x1x1xf32> -> tensor<8x8x1x1xf32, #layout.layout<"OIHW8i8o">>
// CHECK-NEXT:    %c = nn.conv2d %x, %w
// CHECK-NOT:     layout.reorder
func.func @inline(%x: tensor<1x8x4x4xf32, #layout.layout<"NCHW8c">>) -> tensor<1x8x4x4xf32, #layout.layout<"NCHW8c">> {
  %w = nn.constant dense<5.000000e-01> : tensor<8x8x1x1xf32>
  %w8 = layout.reorder %w : tensor<8x8x1x1xf32> -> tensor<8x8x1x1xf32, #layout.layout<"OIHW8i8o">>
  %c = nn.conv2d %x, %w8 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x8x4x4xf32, #layout.layout<"NCHW8c">>, tensor<8x8x1x1xf32, #layout.layout<"OIHW8i8o">>) -> tensor<1x8x4x4xf32, #layout.layout<"NCHW8c">>
  func.return %c : tensor<1x8x4x4xf32, #layout.layout<"NCHW8c">>
}

// -----

// CHECK-LABEL: func.func @shared
// CHECK-NEXT:    %b = nn.constant dense<2.500000e-01> : tensor<8xf32>
// CHECK-NEXT:    %a = nn.add %x, %b
// CHECK-NEXT:    %b_1 = nn.constant dense<2.500000e-01> : tensor<8xf32> -> tensor<8xf32, #layout.layout<"C8c">>
// CHECK-NEXT:    func.return %a, %b_1
func.func @shared(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32, #layout.layout<"C8c">>) {
  %b = nn.constant dense<2.500000e-01> : tensor<8xf32>
  %a = nn.add %x, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %b8 = layout.reorder %b : tensor<8xf32> -> tensor<8xf32, #layout.layout<"C8c">>
  func.return %a, %b8 : tensor<8xf32>, tensor<8xf32, #layout.layout<"C8c">>
}

// -----

// A constant expression is packed at load, right after it is computed: its reorder stays.
// CHECK-LABEL: func.func @expression
// CHECK:         %n = nn.neg %b
// CHECK-NEXT:    %n8 = layout.reorder %n : tensor<8xf32> -> tensor<8xf32, #layout.layout<"C8c">>
func.func @expression(%x: tensor<8xf32>) -> tensor<8xf32, #layout.layout<"C8c">> {
  %b = nn.constant dense<2.500000e-01> : tensor<8xf32>
  %n = nn.neg %b : tensor<8xf32>
  %n8 = layout.reorder %n : tensor<8xf32> -> tensor<8xf32, #layout.layout<"C8c">>
  func.return %n8 : tensor<8xf32, #layout.layout<"C8c">>
}
