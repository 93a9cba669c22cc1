// Layout strings, storages and encodings that are malformed or do not fit their tensor, and
// reorders that change more than the memory arrangement.
// Each chunk is one case; the second RUN checks its whole first error line (file:line:col)
// and, through `not`, that no traceback is printed.
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics
// RUN: not nnlayout-opt %s --split-input-file 2>&1 | filecheck %s -DFILE %s

// bad-layout-string
// expected-error @+1 {{layout 'NCHW16x': block '16x' splits axis 'X', which the layout does not have}}
func.func @f(%x: tensor<1x3x8x8xf32, #layout.layout<"NCHW16x">>) -> tensor<1x3x8x8xf32, #layout.layout<"NCHW16x">> {
  %0 = nn.relu %x : tensor<1x3x8x8xf32, #layout.layout<"NCHW16x">>
  func.return %0 : tensor<1x3x8x8xf32, #layout.layout<"NCHW16x">>
}
// CHECK: [[FILE]]:10:53: error: layout 'NCHW16x': block '16x' splits axis 'X', which the layout does not have

// -----

// bad-layout-zero-block
// expected-error @+1 {{layout 'NCHW0c': block '0c' has factor 0; factors must be positive}}
func.func @f(%x: tensor<1x3x8x8xf32, #layout.layout<"NCHW0c">>) -> tensor<1x3x8x8xf32, #layout.layout<"NCHW0c">> {
  %0 = nn.relu %x : tensor<1x3x8x8xf32, #layout.layout<"NCHW0c">>
  func.return %0 : tensor<1x3x8x8xf32, #layout.layout<"NCHW0c">>
}
// CHECK: [[FILE]]:20:53: error: layout 'NCHW0c': block '0c' has factor 0; factors must be positive

// -----

// bad-storage
// expected-error @+1 {{unknown storage 'coo'; expected one of dense, csr}}
func.func @f(%x: tensor<4x4xf32, #layout.storage<"coo">>) -> tensor<4x4xf32, #layout.storage<"coo">> {
  %0 = nn.relu %x : tensor<4x4xf32, #layout.storage<"coo">>
  func.return %0 : tensor<4x4xf32, #layout.storage<"coo">>
}
// CHECK: [[FILE]]:30:50: error: unknown storage 'coo'; expected one of dense, csr

// -----

// fill-border-value-type: it was accepted, and the f32 buffer's border filled with inf.
func.func @f(%x: memref<1x1x6x6x8xf32>) {
  // the border of an f32 buffer given an f64 value
  // expected-error @+1 {{layout.fill_border: value 1e+300 : f64 is not of the buffer's element type f32}}
  layout.fill_border %x axes [2, 3] halo [1, 1, 1, 1] value 1.0e300 : f64 : memref<1x1x6x6x8xf32>
  func.return
}
// CHECK: [[FILE]]:42:3: error: layout.fill_border: value 1e+300 : f64 is not of the buffer's element type f32

// -----

// layout-non-ascii-digit: an Arabic-Indic digit three was read as a block of 3 (Python's \d and int() take any Unicode digit)
// expected-error @+1 {{layout 'NCHW٣c': unexpected '٣' at position 4}}
func.func @f(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32, #layout.layout<"NCHW٣c">> {
  %0 = layout.reorder %x : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32, #layout.layout<"NCHW٣c">>
  func.return %0 : tensor<1x3x8x8xf32, #layout.layout<"NCHW٣c">>
}
// CHECK: [[FILE]]:51:77: error: layout 'NCHW٣c': unexpected '٣' at position 4

// -----

// layout-rank
func.func @f(%x: tensor<2x3xf32, #layout.layout<"NCHW8c">>) -> tensor<2x3xf32, #layout.layout<"NCHW8c">> {
  // expected-error @+1 {{nn.relu: operand 0: layout 'NCHW8c' has 4 axes but the tensor has rank 2}}
  %0 = nn.relu %x : tensor<2x3xf32, #layout.layout<"NCHW8c">>
  func.return %0 : tensor<2x3xf32, #layout.layout<"NCHW8c">>
}
// CHECK: [[FILE]]:62:3: error: nn.relu: operand 0: layout 'NCHW8c' has 4 axes but the tensor has rank 2

// -----

// reorder-csr-rank
func.func @f(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32, #layout.storage<"csr">> {
  // expected-error @+1 {{layout.reorder: result: CSR storage needs a 2-D tensor, got rank 3}}
  %0 = layout.reorder %x : tensor<2x3x4xf32> -> tensor<2x3x4xf32, #layout.storage<"csr">>
  func.return %0 : tensor<2x3x4xf32, #layout.storage<"csr">>
}
// CHECK: [[FILE]]:72:3: error: layout.reorder: result: CSR storage needs a 2-D tensor, got rank 3

// -----

// reorder-element-type
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf16> {
  // expected-error @+1 {{layout.reorder: element type changes from f32 to f16}}
  %0 = layout.reorder %x : tensor<2x3xf32> -> tensor<2x3xf16>
  func.return %0 : tensor<2x3xf16>
}
// CHECK: [[FILE]]:82:3: error: layout.reorder: element type changes from f32 to f16

// -----

// reorder-shape
func.func @f(%x: tensor<1x3x8x8xf32>) -> tensor<1x8x8x3xf32, #layout.layout<"NHWC">> {
  // expected-error @+1 {{layout.reorder: logical shape changes from [1, 3, 8, 8] to [1, 8, 8, 3]; a reorder only rearranges memory}}
  %0 = layout.reorder %x : tensor<1x3x8x8xf32> -> tensor<1x8x8x3xf32, #layout.layout<"NHWC">>
  func.return %0 : tensor<1x8x8x3xf32, #layout.layout<"NHWC">>
}
// CHECK: [[FILE]]:92:3: error: layout.reorder: logical shape changes from [1, 3, 8, 8] to [1, 8, 8, 3]; a reorder only rearranges memory

// -----

// signature-layout-rank: xDSL verifies no encoding in a function's signature: opt printed this back, and
// nnlayout-run then failed with "error: layout 'NCHW' has 4 axes but the tensor has rank 2",
// no location.
// expected-error @+1 {{@f: argument 1 (%x): layout 'NCHW' has 4 axes but the tensor has rank 2}}
func.func @f(%x: tensor<2x3xf32, #layout.layout<"NCHW">>) -> tensor<2x3xf32, #layout.layout<"NCHW">> {
  func.return %x : tensor<2x3xf32, #layout.layout<"NCHW">>
}
// CHECK: [[FILE]]:103:1: error: @f: argument 1 (%x): layout 'NCHW' has 4 axes but the tensor has rank 2

// -----

// unknown-encoding
func.func @f(%x: tensor<2xf32, "dense">) -> tensor<2xf32, "dense"> {
  // expected-error @+1 {{nn.relu: operand 0: unknown tensor encoding "dense"; expected #layout.layout<...> or #layout.storage<...>}}
  %0 = nn.relu %x : tensor<2xf32, "dense">
  func.return %0 : tensor<2xf32, "dense">
}
// CHECK: [[FILE]]:113:3: error: nn.relu: operand 0: unknown tensor encoding "dense"; expected #layout.layout<...> or #layout.storage<...>
