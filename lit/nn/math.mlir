// Round trip of the element-wise math ops (dialects/nn/math.py), in the pretty and the generic form.
// RUN: nnlayout-opt %s | nnlayout-opt | filecheck %s
// RUN: nnlayout-opt %s --print-op-generic | nnlayout-opt | filecheck %s

func.func @math(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = nn.floor %x : tensor<2x8xf32>
  %1 = nn.ceil %0 : tensor<2x8xf32>
  %2 = nn.round %1 : tensor<2x8xf32>
  %3 = nn.sign %2 : tensor<2x8xf32>
  %4 = nn.sin %3 : tensor<2x8xf32>
  %5 = nn.cos %4 : tensor<2x8xf32>
  %6 = nn.tan %5 : tensor<2x8xf32>
  %7 = nn.asin %6 : tensor<2x8xf32>
  %8 = nn.acos %7 : tensor<2x8xf32>
  %9 = nn.atan %8 : tensor<2x8xf32>
  %10 = nn.sinh %9 : tensor<2x8xf32>
  %11 = nn.cosh %10 : tensor<2x8xf32>
  %12 = nn.asinh %11 : tensor<2x8xf32>
  %13 = nn.acosh %12 : tensor<2x8xf32>
  %14 = nn.atanh %13 : tensor<2x8xf32>
  %15 = nn.softsign %14 : tensor<2x8xf32>
  %16 = nn.celu %15 alpha 0.5 : tensor<2x8xf32>
  func.return %16 : tensor<2x8xf32>
}
// CHECK-LABEL: func.func @math
// CHECK-NEXT: %0 = nn.floor %x : tensor<2x8xf32>
// CHECK-NEXT: %1 = nn.ceil %0
// CHECK-NEXT: %2 = nn.round %1
// CHECK-NEXT: %3 = nn.sign %2
// CHECK-NEXT: %4 = nn.sin %3
// CHECK-NEXT: %5 = nn.cos %4
// CHECK-NEXT: %6 = nn.tan %5
// CHECK-NEXT: %7 = nn.asin %6
// CHECK-NEXT: %8 = nn.acos %7
// CHECK-NEXT: %9 = nn.atan %8
// CHECK-NEXT: %10 = nn.sinh %9
// CHECK-NEXT: %11 = nn.cosh %10
// CHECK-NEXT: %12 = nn.asinh %11
// CHECK-NEXT: %13 = nn.acosh %12
// CHECK-NEXT: %14 = nn.atanh %13
// CHECK-NEXT: %15 = nn.softsign %14
// CHECK-NEXT: %16 = nn.celu %15 alpha 5.000000e-01 : tensor<2x8xf32>
