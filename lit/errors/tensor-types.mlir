// Element types nn ops do not compute on, and shapes that are dynamic, empty or too large
// for a 64-bit byte size.
// Each chunk is one case; the second RUN checks its whole first error line (file:line:col)
// and, through `not`, that no traceback is printed.
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics
// RUN: not nnlayout-opt %s --split-input-file 2>&1 | filecheck %s -DFILE %s

// f8-elements: no kernel and no runtime value holds them (bf16 is one of ours: convert-to-bf16).
func.func @f(%x: tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN> {
  // expected-error @+1 {{nn.relu: operand 0 has element type f8E4M3FN; nn ops compute on bf16, f16, f32 or f64}}
  %0 = nn.relu %x : tensor<4xf8E4M3FN>
  func.return %0 : tensor<4xf8E4M3FN>
}
// CHECK: [[FILE]]:11:3: error: nn.relu: operand 0 has element type f8E4M3FN; nn ops compute on bf16, f16, f32 or f64

// -----

// dim-beyond-int64
func.func @f(%x: tensor<99999999999999999999xf32>) -> tensor<99999999999999999999xf32> {
  // expected-error @+1 {{nn.relu: operand 0: tensor<99999999999999999999xf32> has 99,999,999,999,999,999,999 elements, too many for a 64-bit byte size (at most 9,223,372,036,854,775,807 bytes)}}
  %0 = nn.relu %x : tensor<99999999999999999999xf32>
  func.return %0 : tensor<99999999999999999999xf32>
}
// CHECK: [[FILE]]:21:3: error: nn.relu: operand 0: tensor<99999999999999999999xf32> has 99,999,999,999,999,999,999 elements, too many for a 64-bit byte size (at most 9,223,372,036,854,775,807 bytes)

// -----

// dynamic-dim
func.func @f(%x: tensor<?x3x8x8xf32>) -> tensor<?x3x8x8xf32> {
  // expected-error @+1 {{nn.relu: operand 0 has a dynamic dimension (tensor<?x3x8x8xf32>); nn ops need static shapes}}
  %0 = nn.relu %x : tensor<?x3x8x8xf32>
  func.return %0 : tensor<?x3x8x8xf32>
}
// CHECK: [[FILE]]:31:3: error: nn.relu: operand 0 has a dynamic dimension (tensor<?x3x8x8xf32>); nn ops need static shapes

// -----

// huge-dim-product
func.func @f(%x: tensor<4294967296x4294967296x4xf32>) -> tensor<4294967296x4294967296x4xf32> {
  // expected-error @+1 {{nn.relu: operand 0: tensor<4294967296x4294967296x4xf32> has 73,786,976,294,838,206,464 elements, too many for a 64-bit byte size (at most 9,223,372,036,854,775,807 bytes)}}
  %0 = nn.relu %x : tensor<4294967296x4294967296x4xf32>
  func.return %0 : tensor<4294967296x4294967296x4xf32>
}
// CHECK: [[FILE]]:41:3: error: nn.relu: operand 0: tensor<4294967296x4294967296x4xf32> has 73,786,976,294,838,206,464 elements, too many for a 64-bit byte size (at most 9,223,372,036,854,775,807 bytes)

// -----

// int64-max-dim
func.func @f(%x: tensor<9223372036854775807x2xf32>) -> tensor<9223372036854775807x2xf32> {
  // expected-error @+1 {{nn.relu: operand 0: tensor<9223372036854775807x2xf32> has 18,446,744,073,709,551,614 elements, too many for a 64-bit byte size (at most 9,223,372,036,854,775,807 bytes)}}
  %0 = nn.relu %x : tensor<9223372036854775807x2xf32>
  func.return %0 : tensor<9223372036854775807x2xf32>
}
// CHECK: [[FILE]]:51:3: error: nn.relu: operand 0: tensor<9223372036854775807x2xf32> has 18,446,744,073,709,551,614 elements, too many for a 64-bit byte size (at most 9,223,372,036,854,775,807 bytes)

// -----

// integer-elements
func.func @f(%x: tensor<2xi16>) -> tensor<2xi16> {
  // expected-error @+1 {{nn.neg: operand 0 has element type i16; nn ops compute on bf16, f16, f32 or f64}}
  %0 = nn.neg %x : tensor<2xi16>
  func.return %0 : tensor<2xi16>
}
// CHECK: [[FILE]]:61:3: error: nn.neg: operand 0 has element type i16; nn ops compute on bf16, f16, f32 or f64

// -----

// padded-layout-overflow
func.func @f(%x: tensor<1x3x4611686018427387904x1xf32, #layout.layout<"NCHW16c">>) -> tensor<1x3x4611686018427387904x1xf32, #layout.layout<"NCHW16c">> {
  // expected-error @+1 {{nn.relu: operand 0: tensor<1x3x4611686018427387904x1xf32, #layout.layout<"NCHW16c">> has 73,786,976,294,838,206,464 elements, too many for a 64-bit byte size (at most 9,223,372,036,854,775,807 bytes)}}
  %0 = nn.relu %x : tensor<1x3x4611686018427387904x1xf32, #layout.layout<"NCHW16c">>
  func.return %0 : tensor<1x3x4611686018427387904x1xf32, #layout.layout<"NCHW16c">>
}
// CHECK: [[FILE]]:71:3: error: nn.relu: operand 0: tensor<1x3x4611686018427387904x1xf32, #layout.layout<"NCHW16c">> has 73,786,976,294,838,206,464 elements, too many for a 64-bit byte size (at most 9,223,372,036,854,775,807 bytes)

// -----

// zero-size-dim
func.func @f(%x: tensor<0x3x8x8xf32>) -> tensor<0x3x8x8xf32> {
  // expected-error @+1 {{nn.relu: operand 0 has a zero-size dimension (tensor<0x3x8x8xf32>); empty tensors are not supported}}
  %0 = nn.relu %x : tensor<0x3x8x8xf32>
  func.return %0 : tensor<0x3x8x8xf32>
}
// CHECK: [[FILE]]:81:3: error: nn.relu: operand 0 has a zero-size dimension (tensor<0x3x8x8xf32>); empty tensors are not supported
