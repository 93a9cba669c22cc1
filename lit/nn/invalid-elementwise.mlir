// Verifier messages of the element-wise ops and the checks every nn op makes on its types.
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics

func.func @add_no_broadcast(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{nn.add: shapes [2, 3], [4, 3] do not broadcast (dimension 0 of the broadcast result has sizes [2, 4])}}
  %0 = nn.add %a, %b : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @mul_result(%a: tensor<2x1xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{nn.mul: result shape [2, 1] does not match the inferred shape [2, 3]}}
  %0 = nn.mul %a, %b : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x1xf32>
  func.return
}

// -----

func.func @sum_no_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{nn.sum: shapes [2, 3], [3], [2] do not broadcast (dimension 1 of the broadcast result has sizes [2, 3])}}
  %0 = nn.sum %a, %b, %c : (tensor<2x3xf32>, tensor<3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @sum_no_inputs() {
  // expected-error @+1 {{nn.sum: needs at least one input}}
  %0 = nn.sum : () -> tensor<2xf32>
  func.return
}

// -----

func.func @clip_min_above_max(%x: tensor<4xf32>) {
  // expected-error @+1 {{nn.clip: min 6.0 is greater than max 0.0}}
  %0 = nn.clip %x min 6.0 max 0.0 : tensor<4xf32>
  func.return
}

// -----

// The unary ops tie the result type to the operand's (xDSL's own constraint message).
func.func @relu_result_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{attribute tensor<4xf32> expected from variable 'T', but got tensor<5xf32>}}
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<5xf32>
  func.return
}

// -----

func.func @dynamic_dimension(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{nn.relu: operand 0 has a dynamic dimension (tensor<?x4xf32>); nn ops need static shapes}}
  %0 = nn.relu %x : tensor<?x4xf32>
  func.return
}

// -----

func.func @zero_size(%x: tensor<0x4xf32>, %y: tensor<1x4xf32>) {
  // expected-error @+1 {{nn.add: operand 0 has a zero-size dimension (tensor<0x4xf32>); empty tensors are not supported}}
  %0 = nn.add %x, %y : (tensor<0x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return
}

// -----

func.func @integer_elements(%x: tensor<4xi16>) {
  // expected-error @+1 {{nn.neg: operand 0 has element type i16; nn ops compute on bf16, f16, f32 or f64}}
  %0 = nn.neg %x : tensor<4xi16>
  func.return
}

// -----

func.func @mixed_elements(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{nn.sub: operand 1 has element type f16, expected f32 like operand 0}}
  %0 = nn.sub %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  func.return
}

// -----

func.func @result_elements(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{nn.div: result 0 has element type f64, expected f32 like operand 0}}
  %0 = nn.div %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf64>
  func.return
}

// -----

func.func @layout_rank(%x: tensor<2x8xf32, #layout.layout<"NCHW8c">>) {
  // expected-error @+1 {{nn.relu: operand 0: layout 'NCHW8c' has 4 axes but the tensor has rank 2}}
  %0 = nn.relu %x : tensor<2x8xf32, #layout.layout<"NCHW8c">>
  func.return
}

// -----

func.func @csr_rank(%x: tensor<2x8x4xf32, #layout.storage<"csr">>) {
  // expected-error @+1 {{nn.exp: operand 0: CSR storage needs a 2-D tensor, got rank 3}}
  %0 = nn.exp %x : tensor<2x8x4xf32, #layout.storage<"csr">>
  func.return
}

// -----

func.func @foreign_encoding(%x: tensor<2x8xf32, "rowmajor">) {
  // expected-error @+1 {{nn.tanh: operand 0: unknown tensor encoding "rowmajor"; expected #layout.layout<...> or #layout.storage<...>}}
  %0 = nn.tanh %x : tensor<2x8xf32, "rowmajor">
  func.return
}

// -----

func.func @result_encoding(%a: tensor<2x8xf32>, %b: tensor<2x8xf32>) {
  // expected-error @+1 {{nn.add: result 0: layout 'NHWC' has 4 axes but the tensor has rank 2}}
  %0 = nn.add %a, %b : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32, #layout.layout<"NHWC">>
  func.return
}
