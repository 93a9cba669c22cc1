// Constants and float literals the parser or nn.constant refuses.
// Each chunk is one case; the second RUN checks its whole first error line (file:line:col)
// and, through `not`, that no traceback is printed.
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics
// RUN: not nnlayout-opt %s --split-input-file 2>&1 | filecheck %s -DFILE %s

// clip-hex-bound-width: 0x7F800000 (+inf, as the printer writes it) is read; 0x7F80 is neither width.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{a hexadecimal float literal gives the bits of an f32 (8 digits) or an f64 (16 digits)}}
  %0 = nn.clip %x max 0x7F80 : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: [[FILE]]:10:23: error: a hexadecimal float literal gives the bits of an f32 (8 digits) or an f64 (16 digits)

// -----

// constant-f80
func.func @f() {
  // expected-error @+1 {{f80 is not supported (xDSL holds no f80 values)}}
  %0 = arith.constant dense<1.0> : tensor<2xf80>
  func.return
}
// CHECK: [[FILE]]:20:45: error: f80 is not supported (xDSL holds no f80 values)

// -----

// constant-literal-dynamic
func.func @f() -> tensor<2xf32> {
  // expected-error @+1 {{Dense literal attribute should have a static shape.}}
  %0 = nn.constant dense<1.0> : tensor<?xf32>
  func.return %0 : tensor<2xf32>
}
// CHECK: [[FILE]]:30:20: error: Dense literal attribute should have a static shape.

// -----

// constant-literal-hex-float-too-wide
func.func @f() -> tensor<2xf32> {
  // expected-error @+1 {{a hexadecimal literal has more bits than its element type f32}}
  %0 = nn.constant dense<[0x7FF0000000000000, 1.0]> : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// CHECK: [[FILE]]:40:27: error: a hexadecimal literal has more bits than its element type f32

// -----

// constant-literal-integer-out-of-range
func.func @f() -> tensor<2xf32> {
  // expected-error @+1 {{Integer value 99999999999999999999999 is out of range for type i32 which supports values in the range [-2147483648, 4294967296)}}
  %0 = nn.constant dense<99999999999999999999999> : tensor<2xi32>
  func.return %0 : tensor<2xf32>
}
// CHECK: [[FILE]]:50:25: error: Integer value 99999999999999999999999 is out of range for type i32 which supports values in the range [-2147483648, 4294967296)

// -----

// constant-literal-negative-hex-float: MLIR and xDSL print NaN and ±Inf elements as their bits (0xFF800000 is -inf).
func.func @f() -> tensor<2xf32> {
  // expected-error @+1 {{a hexadecimal float literal gives the element's bits; it cannot be negative}}
  %0 = nn.constant dense<[-0x7F800000, 1.0]> : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// CHECK: [[FILE]]:60:27: error: a hexadecimal float literal gives the element's bits; it cannot be negative

// -----

// constant-literal-not-shaped
func.func @f() -> tensor<2xf32> {
  // expected-error @+1 {{Expected memref, vector or tensor type of integer, index, float, or complex type}}
  %0 = nn.constant dense<1.0> : f32
  func.return %0 : tensor<2xf32>
}
// CHECK: [[FILE]]:70:20: error: Expected memref, vector or tensor type of integer, index, float, or complex type

// -----

// constant-negative-hex-float-scalar: xDSL read it as the value -2139095040.0 (MLIR refuses it too).
func.func @f() {
  // expected-error @+1 {{a hexadecimal float literal gives the value's bits; it cannot be negative}}
  %c = arith.constant -0x7F800000 : f32
  func.return
}
// CHECK: [[FILE]]:80:23: error: a hexadecimal float literal gives the value's bits; it cannot be negative

// -----

// constant-splat-beyond-memory
func.func @f() -> tensor<1000000x1000000xf32> {
  // expected-error @+1 {{dense literal of type tensor<1000000x1000000xf32> has 1,000,000,000,000 elements; parsing it needs 12,000,000,000,000 bytes (10.9 TiB), more than this machine's memory}}
  %0 = nn.constant dense<1.0> : tensor<1000000x1000000xf32>
  func.return %0 : tensor<1000000x1000000xf32>
}
// CHECK: [[FILE]]:90:33: error: dense literal of type tensor<1000000x1000000xf32> has 1,000,000,000,000 elements; parsing it needs 12,000,000,000,000 bytes (10.9 TiB), more than this machine's memory

// -----

// constant-type
func.func @f() -> tensor<2xf32> {
  // expected-error @+1 {{nn.constant: value of type tensor<3xf32> does not match the result type tensor<2xf32>}}
  %0 = nn.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32> -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// CHECK: [[FILE]]:100:3: error: nn.constant: value of type tensor<3xf32> does not match the result type tensor<2xf32>
