// Round trip of nn.reduce, nn.layer_norm and nn.lrn, in the pretty and the generic form.
// RUN: nnlayout-opt %s | nnlayout-opt | filecheck %s
// RUN: nnlayout-opt %s --print-op-generic > %t
// RUN: filecheck %s --check-prefix=GENERIC < %t
// RUN: nnlayout-opt %t | filecheck %s

func.func @reductions(%x: tensor<1x20x7x7xf32>, %t: tensor<2x5x12xf16>) -> tensor<2x5x1xf16> {
  %0 = nn.reduce %x kind "mean" axes [1] : tensor<1x20x7x7xf32> -> tensor<1x1x7x7xf32>
  %1 = nn.reduce %x kind "max" axes [2, 3] : tensor<1x20x7x7xf32> -> tensor<1x20x1x1xf32>
  %2 = nn.reduce %x kind "sum_square" axes [0, 1, 2, 3] : tensor<1x20x7x7xf32> -> tensor<1x1x1x1xf32>
  %3 = nn.reduce %t kind "l2" axes [2] : tensor<2x5x12xf16> -> tensor<2x5x1xf16>
  func.return %3 : tensor<2x5x1xf16>
}
// CHECK-LABEL: func.func @reductions
// CHECK:      %0 = nn.reduce %x kind "mean" axes [1] : tensor<1x20x7x7xf32> -> tensor<1x1x7x7xf32>
// CHECK-NEXT: %1 = nn.reduce %x kind "max" axes [2, 3] : tensor<1x20x7x7xf32> -> tensor<1x20x1x1xf32>
// CHECK-NEXT: %2 = nn.reduce %x kind "sum_square" axes [0, 1, 2, 3] : tensor<1x20x7x7xf32> -> tensor<1x1x1x1xf32>
// CHECK-NEXT: %3 = nn.reduce %t kind "l2" axes [2] : tensor<2x5x12xf16> -> tensor<2x5x1xf16>
// GENERIC-LABEL: "func.func"() <{sym_name = "reductions"
// GENERIC:      %0 = "nn.reduce"(%x) <{kind = "mean", axes = array<i64: 1>}> : (tensor<1x20x7x7xf32>) -> tensor<1x1x7x7xf32>

func.func @normalisations(%x: tensor<1x7x20xf32>, %s: tensor<20xf32>, %b: tensor<20xf32>, %c: tensor<1x20x5x5xf32>, %hw: tensor<5x5xf32>) -> tensor<1x20x5x5xf32> {
  %0 = nn.layer_norm %x, %s, %b axis -1 epsilon 1.0e-6 : (tensor<1x7x20xf32>, tensor<20xf32>, tensor<20xf32>) -> tensor<1x7x20xf32>
  %1 = nn.layer_norm %c, %hw axis 2 epsilon 1.0e-5 : (tensor<1x20x5x5xf32>, tensor<5x5xf32>) -> tensor<1x20x5x5xf32>
  %2 = nn.lrn %1 size 5 alpha 1.0e-4 beta 0.75 bias 1.0 : tensor<1x20x5x5xf32>
  func.return %2 : tensor<1x20x5x5xf32>
}
// CHECK-LABEL: func.func @normalisations
// CHECK:      %0 = nn.layer_norm %x, %s, %b axis -1 epsilon 1.000000e-06 : (tensor<1x7x20xf32>, tensor<20xf32>, tensor<20xf32>) -> tensor<1x7x20xf32>
// CHECK-NEXT: %1 = nn.layer_norm %c, %hw axis 2 epsilon 1.000000e-05 : (tensor<1x20x5x5xf32>, tensor<5x5xf32>) -> tensor<1x20x5x5xf32>
// CHECK-NEXT: %2 = nn.lrn %1 size 5 alpha 1.000000e-04 beta 7.500000e-01 bias 1.000000e+00 : tensor<1x20x5x5xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "normalisations"
// GENERIC:      %0 = "nn.layer_norm"(%x, %s, %b) <{axis = -1 : i64, epsilon = 1.000000e-06 : f32}>
// GENERIC:      %2 = "nn.lrn"(%1) <{size = 5 : i64, alpha = 1.000000e-04 : f32, beta = 7.500000e-01 : f32, bias = 1.000000e+00 : f32}>
