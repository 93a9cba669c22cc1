// Bad layout strings are parse errors located at the string; bad storages, encodings that do
// not fit the tensor, and reorders that change more than the memory arrangement do not verify.
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics

func.func @unknown_letter_block(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{layout 'NCHW16x': block '16x' splits axis 'X', which the layout does not have}}
  %0 = layout.reorder %x : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32, #layout.layout<"NCHW16x">>
  func.return
}

// -----

func.func @zero_factor(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{layout 'NCHW0c': block '0c' has factor 0; factors must be positive}}
  %0 = layout.reorder %x : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32, #layout.layout<"NCHW0c">>
  func.return
}

// -----

func.func @block_without_factor(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{layout 'NCHWc': block 'c' needs a factor, e.g. '16c' (a whole axis is upper case: 'C')}}
  %0 = layout.reorder %x : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32, #layout.layout<"NCHWc">>
  func.return
}

// -----

func.func @factor_on_whole_axis(%x: tensor<3xf32>) {
  // expected-error @+1 {{layout '16C': whole axis 'C' cannot have a factor ('16C'); write a block in lower case, e.g. '16c'}}
  %0 = layout.reorder %x : tensor<3xf32> -> tensor<3xf32, #layout.layout<"16C">>
  func.return
}

// -----

func.func @duplicate_axis(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{layout 'NCHWC': axis 'C' appears twice}}
  %0 = layout.reorder %x : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32, #layout.layout<"NCHWC">>
  func.return
}

// -----

func.func @empty(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{layout string is empty}}
  %0 = layout.reorder %x : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32, #layout.layout<"">>
  func.return
}

// -----

func.func @stray_character(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{layout 'NC_HW': unexpected '_' at position 2}}
  %0 = layout.reorder %x : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32, #layout.layout<"NC_HW">>
  func.return
}

// -----

func.func @trailing_factor(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{layout 'NCHW16': unexpected '16' at position 4}}
  %0 = layout.reorder %x : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32, #layout.layout<"NCHW16">>
  func.return
}

// -----

// A bad layout in a function signature is reported at the string too.
// expected-error @+1 {{layout 'NCHW8x'}}
func.func @in_signature(%x: tensor<1x3x8x8xf32, #layout.layout<"NCHW8x">>) {
  func.return
}

// -----

func.func @rank_mismatch(%x: tensor<1x3x8xf32>) {
  // expected-error @+1 {{layout.reorder: result: layout 'NCHW16c' has 4 axes but the tensor has rank 3}}
  %0 = layout.reorder %x : tensor<1x3x8xf32> -> tensor<1x3x8xf32, #layout.layout<"NCHW16c">>
  func.return
}

// -----

func.func @rank_mismatch_input(%x: tensor<1x3x8x8xf32, #layout.layout<"NCW">>) {
  // expected-error @+1 {{layout.reorder: input: layout 'NCW' has 3 axes but the tensor has rank 4}}
  %0 = layout.reorder %x : tensor<1x3x8x8xf32, #layout.layout<"NCW">> -> tensor<1x3x8x8xf32>
  func.return
}

// -----

func.func @unknown_storage(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{unknown storage 'coo'; expected one of dense, csr}}
  %0 = layout.reorder %x : tensor<4x4xf32> -> tensor<4x4xf32, #layout.storage<"coo">>
  func.return
}

// -----

func.func @csr_rank(%x: tensor<2x4x4xf32>) {
  // expected-error @+1 {{layout.reorder: result: CSR storage needs a 2-D tensor, got rank 3}}
  %0 = layout.reorder %x : tensor<2x4x4xf32> -> tensor<2x4x4xf32, #layout.storage<"csr">>
  func.return
}

// -----

func.func @foreign_encoding(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{layout.reorder: result: unknown tensor encoding 7 : i64; expected #layout.layout<...> or #layout.storage<...>}}
  %0 = layout.reorder %x : tensor<4x4xf32> -> tensor<4x4xf32, 7 : i64>
  func.return
}

// -----

func.func @shape_change(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{layout.reorder: logical shape changes from [1, 3, 8, 8] to [1, 16, 8, 8]; a reorder only rearranges memory}}
  %0 = layout.reorder %x : tensor<1x3x8x8xf32> -> tensor<1x16x8x8xf32, #layout.layout<"NCHW16c">>
  func.return
}

// -----

func.func @element_change(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{layout.reorder: element type changes from f32 to f16}}
  %0 = layout.reorder %x : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf16, #layout.layout<"NCHW8c">>
  func.return
}

// -----

// Padding counts: 3 x 2^58 f32 elements fit a 64-bit byte size, but NCHW16c pads C=3 to 16.
func.func @too_many_bytes(%x: tensor<1x3x536870912x536870912xf32>) {
  // expected-error @+1 {{layout.reorder: result: tensor<1x3x536870912x536870912xf32, #layout.layout<"NCHW16c">> has 4,611,686,018,427,387,904 elements, too many for a 64-bit byte size}}
  %0 = layout.reorder %x : tensor<1x3x536870912x536870912xf32> -> tensor<1x3x536870912x536870912xf32, #layout.layout<"NCHW16c">>
  func.return
}

// -----

func.func @fill_border_halo(%b: memref<1x2x10x10x8xf32>) {
  // expected-error @+1 {{layout.fill_border: halo needs 4 non-negative values, got [1, 1, -1, 1]}}
  layout.fill_border %b axes [2, 3] halo [1, 1, -1, 1] value 0.0 : f32 : memref<1x2x10x10x8xf32>
  func.return
}

// -----

func.func @fill_border_axes(%b: memref<1x2x10x10x8xf32>) {
  // expected-error @+1 {{layout.fill_border: axes [2, 5] must name the H and W dimensions of the rank-5 buffer}}
  layout.fill_border %b axes [2, 5] halo [1, 1, 1, 1] value 0.0 : f32 : memref<1x2x10x10x8xf32>
  func.return
}

// -----

func.func @fill_border_no_interior(%b: memref<1x2x10x4x8xf32>) {
  // expected-error @+1 {{layout.fill_border: halo [1, 2, 1, 2] leaves no interior along dimension 3 of size 4}}
  layout.fill_border %b axes [2, 3] halo [1, 2, 1, 2] value 0.0 : f32 : memref<1x2x10x4x8xf32>
  func.return
}
