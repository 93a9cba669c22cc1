// nnlayout-import folds the exporters' shape arithmetic: a classic-exporter channel shuffle
// (Shape, Gather, Div, Unsqueeze, Concat) leaves only reshape / transpose / reshape, once
// --input-shape fixes its symbolic batch; without it, the refusal names the option. A fold
// that would make a 40 GB constant is refused before it is computed.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/shape_arithmetic.py %t
// RUN: nnlayout-import %t/shuffle.onnx --input-shape x=3x10x5x4 | filecheck %s
// RUN: not nnlayout-import %t/shuffle.onnx 2>&1 | filecheck %s --check-prefix=SYMBOLIC
// RUN: not nnlayout-import %t/fill.onnx 2>&1 | filecheck %s --check-prefix=FILL

// CHECK:      func.func @main(%x: tensor<3x10x5x4xf32>) -> tensor<3x10x5x4xf32> {
// CHECK-NEXT:   %a = nn.relu %x
// CHECK-NEXT:   %r = nn.reshape %a : tensor<3x10x5x4xf32> -> tensor<3x2x5x5x4xf32>
// CHECK-NEXT:   %t = nn.transpose %r perm [0, 2, 1, 3, 4]
// CHECK-NEXT:   %y = nn.reshape %t : tensor<3x5x2x5x4xf32> -> tensor<3x10x5x4xf32>
// CHECK-NEXT:   func.return %y

// SYMBOLIC: error: graph input 'x' has a symbolic dimension 'batch' (axis 0); nnlayout needs static shapes: give its sizes with --batch N (for the first axis of every input) or --input-shape (e.g. x=1x10x5x4; input_shapes= in import_model), or export the model with fixed sizes

// FILL: error: node 'fill' (ConstantOfShape): folding it at import would make output 'c' a constant of 40,000,000,000 bytes (37.3 GiB), more than the 2.0 GiB a folded constant may take
