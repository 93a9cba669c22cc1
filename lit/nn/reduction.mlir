// Round trip of nn.reduce, nn.layer_norm, nn.lrn and nn.cumsum, in the pretty and the generic form.
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

func.func @running_sums(%x: tensor<1x20x7x7xf32>, %ids: tensor<1x6xi64>) -> tensor<1x6xi64> {
  %0 = nn.cumsum %x axis 1 : tensor<1x20x7x7xf32>
  %1 = nn.cumsum %x axis -1 exclusive reverse : tensor<1x20x7x7xf32>
  %one = nn.constant dense<1> : tensor<i64>
  %2 = nn.compare "ne" %ids, %one : (tensor<1x6xi64>, tensor<i64>) -> tensor<1x6xi1>
  %3 = nn.cast %2 : tensor<1x6xi1> -> tensor<1x6xi32>
  %4 = nn.cumsum %3 axis 1 reverse : tensor<1x6xi32>
  %5 = nn.mul %4, %3 : (tensor<1x6xi32>, tensor<1x6xi32>) -> tensor<1x6xi32>
  %6 = nn.cast %5 : tensor<1x6xi32> -> tensor<1x6xi64>
  %7 = nn.add %6, %one : (tensor<1x6xi64>, tensor<i64>) -> tensor<1x6xi64>
  %8 = nn.sub %7, %ids : (tensor<1x6xi64>, tensor<1x6xi64>) -> tensor<1x6xi64>
  func.return %8 : tensor<1x6xi64>
}
// CHECK-LABEL: func.func @running_sums
// CHECK:      %0 = nn.cumsum %x axis 1 : tensor<1x20x7x7xf32>
// CHECK-NEXT: %1 = nn.cumsum %x axis -1 exclusive reverse : tensor<1x20x7x7xf32>
// CHECK:      %3 = nn.cast %2 : tensor<1x6xi1> -> tensor<1x6xi32>
// CHECK-NEXT: %4 = nn.cumsum %3 axis 1 reverse : tensor<1x6xi32>
// CHECK-NEXT: %5 = nn.mul %4, %3 : (tensor<1x6xi32>, tensor<1x6xi32>) -> tensor<1x6xi32>
// CHECK-NEXT: %6 = nn.cast %5 : tensor<1x6xi32> -> tensor<1x6xi64>
// CHECK-NEXT: %7 = nn.add %6, %one : (tensor<1x6xi64>, tensor<i64>) -> tensor<1x6xi64>
// CHECK-NEXT: %8 = nn.sub %7, %ids : (tensor<1x6xi64>, tensor<1x6xi64>) -> tensor<1x6xi64>
// GENERIC-LABEL: "func.func"() <{sym_name = "running_sums"
// GENERIC:      %1 = "nn.cumsum"(%x) <{axis = -1 : i64, exclusive, reverse}> : (tensor<1x20x7x7xf32>) -> tensor<1x20x7x7xf32>
