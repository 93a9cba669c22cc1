// Round trip of nn.compare and nn.where and of i1 mask constants, in the pretty and the
// generic form.
// RUN: nnlayout-opt %s | filecheck %s
// RUN: nnlayout-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: nnlayout-opt %s -p 'default-pipeline{target=avx2 remarks=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=REMARK

func.func @leaky(%x: tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> {
  %zero = nn.constant dense<0.0> : tensor<f32>
  %tenth = nn.constant dense<0.1> : tensor<f32>
  %m = nn.compare "gt" %x, %zero : (tensor<1x4x5x5xf32>, tensor<f32>) -> tensor<1x4x5x5xi1>
  %s = nn.mul %x, %tenth : (tensor<1x4x5x5xf32>, tensor<f32>) -> tensor<1x4x5x5xf32>
  %y = nn.where %m, %x, %s : (tensor<1x4x5x5xi1>, tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  func.return %y : tensor<1x4x5x5xf32>
}
// CHECK-LABEL: func.func @leaky
// CHECK: %m = nn.compare "gt" %x, %zero : (tensor<1x4x5x5xf32>, tensor<f32>) -> tensor<1x4x5x5xi1>
// CHECK: %y = nn.where %m, %x, %s : (tensor<1x4x5x5xi1>, tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
// GENERIC: "nn.compare"(%x, %zero) <{predicate = "gt"}> : (tensor<1x4x5x5xf32>, tensor<f32>) -> tensor<1x4x5x5xi1>
// GENERIC: "nn.where"(%m, %x, %s) : (tensor<1x4x5x5xi1>, tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>

// A causal mask, -inf above the diagonal; the mask, x and y broadcast.
func.func @masked(%scores: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %mask = nn.constant dense<[[true, false, false], [true, true, false], [true, true, true]]> : tensor<3x3xi1>
  %minf = nn.constant dense<0xFF800000> : tensor<f32>
  %y = nn.where %mask, %scores, %minf : (tensor<3x3xi1>, tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}
// CHECK-LABEL: func.func @masked
// CHECK: nn.constant dense<{{\[}}[true, false, false], [true, true, false], [true, true, true]]> : tensor<3x3xi1>
// CHECK: nn.where %mask, %scores, %minf : (tensor<3x3xi1>, tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<1x2x3x3xf32>

// Each predicate; where on quantized data (exact: it only selects).
func.func @predicates(%a: tensor<4xf32>, %b: tensor<4xf32>, %q: tensor<4xui8>, %r: tensor<4xui8>) -> tensor<4xui8> {
  %0 = nn.compare "eq" %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = nn.compare "lt" %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %2 = nn.compare "le" %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %3 = nn.compare "ge" %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %4 = nn.where %3, %q, %r : (tensor<4xi1>, tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  func.return %4 : tensor<4xui8>
}
// CHECK-LABEL: func.func @predicates
// CHECK: nn.compare "eq"
// CHECK: nn.compare "lt"
// CHECK: nn.compare "le"
// CHECK: nn.compare "ge"
// CHECK: nn.where %3, %q, %r : (tensor<4xi1>, tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>

// A mask moved and cast to f32 (torch's mask.float()).
func.func @moved(%m: tensor<2x4xi1>) -> tensor<4x2xf32> {
  %t = nn.transpose %m perm [1, 0] : tensor<2x4xi1> -> tensor<4x2xi1>
  %f = nn.cast %t : tensor<4x2xi1> -> tensor<4x2xf32>
  func.return %f : tensor<4x2xf32>
}
// CHECK-LABEL: func.func @moved
// CHECK: nn.transpose %m perm [1, 0] : tensor<2x4xi1> -> tensor<4x2xi1>
// CHECK: nn.cast %t : tensor<4x2xi1> -> tensor<4x2xf32>

// Dispatch says why the reference kernels run: a where on quantized data, a mask moved.
// REMARK: remark: [select-dispatch] nn.where: ui8 data (quantized), not supported by where_any; using where_ref
// REMARK: remark: [select-dispatch] nn.transpose: i1 data (a mask): no sparse/blocked kernel computes nn.transpose on it; using transpose_ref

// A mask combined with another (ONNX And, Or, Xor), a NaN test (IsNaN as x ne x) and an
// int64 attention mask made a mask (Cast to bool: true where non-zero).
func.func @combined(%a: tensor<2x4xf32>, %causal: tensor<4xi1>, %attention: tensor<2x4xi64>) -> tensor<2x4xi1> {
  %nan = nn.compare "ne" %a, %a : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xi1>
  %0 = nn.logical "and" %nan, %causal : (tensor<2x4xi1>, tensor<4xi1>) -> tensor<2x4xi1>
  %kept = nn.cast %attention : tensor<2x4xi64> -> tensor<2x4xi1>
  %1 = nn.logical "or" %0, %kept : (tensor<2x4xi1>, tensor<2x4xi1>) -> tensor<2x4xi1>
  %2 = nn.logical "xor" %1, %kept : (tensor<2x4xi1>, tensor<2x4xi1>) -> tensor<2x4xi1>
  func.return %2 : tensor<2x4xi1>
}
// CHECK-LABEL: func.func @combined
// CHECK: nn.compare "ne" %a, %a : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xi1>
// CHECK: nn.logical "and" %nan, %causal : (tensor<2x4xi1>, tensor<4xi1>) -> tensor<2x4xi1>
// CHECK: nn.cast %attention : tensor<2x4xi64> -> tensor<2x4xi1>
// CHECK: nn.logical "or"
// CHECK: nn.logical "xor"
// GENERIC: "nn.logical"(%nan, %causal) <{operation = "and"}> : (tensor<2x4xi1>, tensor<4xi1>) -> tensor<2x4xi1>

// Token ids compared with a padding id: i64 operands compare exactly.
func.func @padding(%ids: tensor<1x6xi64>) -> tensor<1x6xi1> {
  %pad = nn.constant dense<0> : tensor<i64>
  %0 = nn.compare "ne" %ids, %pad : (tensor<1x6xi64>, tensor<i64>) -> tensor<1x6xi1>
  func.return %0 : tensor<1x6xi1>
}
// CHECK-LABEL: func.func @padding
// CHECK: nn.compare "ne" %ids, %pad : (tensor<1x6xi64>, tensor<i64>) -> tensor<1x6xi1>
