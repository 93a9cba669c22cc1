// Text that does not parse: one located error, as xDSL or our parser patches word it.
// Each chunk is one case; the second RUN checks its whole first error line (file:line:col)
// and, through `not`, that no traceback is printed.
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics
// RUN: not nnlayout-opt %s --split-input-file 2>&1 | filecheck %s -DFILE %s

// duplicate-function: xDSL blamed the implicit module, which has no location.

func.func @f(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  func.return %x : tensor<2x2xf32>
}
// expected-error @+1 {{redefinition of symbol @f (first defined at}}
func.func @f(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = nn.neg %x : tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}
// CHECK: [[FILE]]:13:1: error: redefinition of symbol @f (first defined at [[FILE]]:9:1)

// -----

// missing-property
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{Expected 'axis'}}
  %0 = nn.softmax %x : tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: [[FILE]]:24:22: error: Expected 'axis'

// -----

// syntax-bare-caret
func.func @f() {
  func.return
// expected-error @+1 {{expected a name or a number after '^' (e.g. ^bb0)}}
^ :
}
// CHECK: [[FILE]]:35:1: error: expected a name or a number after '^' (e.g. ^bb0)

// -----

// syntax-bare-percent: xDSL's message was "Expected suffix identifier after {first_char}", its placeholder
// unfilled; the same for '#', '^' and '!'.
// An SSA name with a space cannot be written:
// expected-error @+1 {{expected a name or a number after '%' (e.g. %x, %0; quoted names such as %"x y" are not MLIR)}}
func.func @f(%"x y": tensor<2xf32>) -> tensor<2xf32> {
  func.return %"x y" : tensor<2xf32>
}
// CHECK: [[FILE]]:45:14: error: expected a name or a number after '%' (e.g. %x, %0; quoted names such as %"x y" are not MLIR)

// -----

// syntax-byte-order-mark: a byte-order mark (U+FEFF) where a token starts, here the first one; xDSL's message names the invisible character
// expected-error @+1 {{Unexpected character U+FEFF}}
﻿func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
// CHECK: [[FILE]]:54:1: error: Unexpected character U+FEFF

// -----

// syntax-garbage
// expected-error @+1 {{Operation this is not registered}}
this is not MLIR at all {{ ]]
// CHECK: [[FILE]]:63:1: error: Operation this is not registered

// -----

// syntax-integer-overflow-in-array
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{an integer does not fit its type (argument out of range)}}
  %0 = nn.conv2d %x, %w strides [99999999999999999999, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}
// CHECK: [[FILE]]:71:3: error: an integer does not fit its type (argument out of range)

// -----

// syntax-negative-dim
// expected-error @+1 {{Expected shape type.}}
func.func @f(%x: tensor<4x2xf32>) -> tensor<4x-2xf32> {
  %0 = nn.relu %x : tensor<4x-2xf32>
  func.return %0 : tensor<4x-2xf32>
}
// CHECK: [[FILE]]:80:47: error: Expected shape type.

// -----

// syntax-nested-too-deeply: where the recursion limit strikes depends on the stack depth: its column is not checked
func.func @f() -> tensor<1xf32> {
  // expected-error @+1 {{the input is nested too deeply to parse}}
  %0 = nn.constant dense<[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1.0]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]> : tensor<1xf32>
  func.return %0 : tensor<1xf32>
}
// CHECK: [[FILE]]:91:{{[0-9]+}}: error: the input is nested too deeply to parse

// -----

// syntax-redefined-value
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu %x : tensor<2xf32>
  // expected-error @+1 {{SSA value %0 is already defined}}
  %0 = nn.neg %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// CHECK: [[FILE]]:102:3: error: SSA value %0 is already defined

// -----

// syntax-three-part-complex: xDSL's parser asserted here (an internal error)
func.func @f() -> tensor<2xf32> {
  // expected-error @+1 {{expected ')', got ','}}
  %0 = nn.constant dense<[1.0, (2.0, 3.0, 4.0)]> : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// CHECK: [[FILE]]:112:41: error: expected ')', got ','

// -----

// syntax-undefined-value
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{values used but not defined: [%y]}}
  %0 = nn.relu %y : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// CHECK: [[FILE]]:122:3: error: values used but not defined: [%y]

// -----

// syntax-unterminated-string: xDSL's string pattern backtracked exponentially here: the tool ran for minutes
builtin.module {
  // expected-error @+1 {{End of file reached before closing string literal.}}
  func.func "main(%x: tensor<2x33x11x9xf32>) -> tensor<2x33x11x9xf32> attributes {a = 1} {
    func.return %x : tensor<2x33x11x9xf32>
  }
}
// CHECK: [[FILE]]:132:13: error: End of file reached before closing string literal.

// -----

// syntax-use-with-wrong-type
func.func @f(%x: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{operand is used with type tensor<3xf32>, but has been previously used or defined with type tensor<2xf32>}}
  %0 = nn.relu %x : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
// CHECK: [[FILE]]:143:16: error: operand is used with type tensor<3xf32>, but has been previously used or defined with type tensor<2xf32>

// -----

// unknown-attribute
// expected-error @+1 {{'nn.tiling' is not registered}}
func.func @f(%x: tensor<2xf32, #nn.tiling<"4">>) -> tensor<2xf32> {
  %0 = nn.relu %x : tensor<2xf32, #nn.tiling<"4">>
  func.return %0 : tensor<2xf32>
}
// CHECK: [[FILE]]:152:42: error: 'nn.tiling' is not registered

// -----

// unknown-dialect
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{Operation tpu.matmul is not registered}}
  %0 = tpu.matmul %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// CHECK: [[FILE]]:163:8: error: Operation tpu.matmul is not registered

// -----

// unknown-op
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{Operation nn.frobnicate is not registered}}
  %0 = nn.frobnicate %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// CHECK: [[FILE]]:173:8: error: Operation nn.frobnicate is not registered

// -----

// use-before-def-self: xDSL checks no dominance; nnlayout-run failed with an internal KeyError here
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{operand 0 of nn.relu is used before it is defined (by this op or a later one)}}
  %0 = nn.relu %0 : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// CHECK: [[FILE]]:183:3: error: operand 0 of nn.relu is used before it is defined (by this op or a later one)

// -----

// syntax-unclosed-region
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
// CHECK: [[FILE]]:196:1: error: expected '}' to close the region (or a block label such as ^bb1:)
// expected-error @+1 {{expected '}' to close the region (or a block label such as ^bb1:)}}
