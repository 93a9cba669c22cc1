// Round trip of the element-wise ops, in the pretty and the generic form.
// RUN: nnlayout-opt %s | nnlayout-opt | filecheck %s
// RUN: nnlayout-opt %s --print-op-generic > %t
// RUN: filecheck %s --check-prefix=GENERIC < %t
// RUN: nnlayout-opt %t | filecheck %s

func.func @unary(%x: tensor<1x64x56x56xf32>, %h: tensor<2x8xf16>) -> tensor<2x8xf16> {
  %0 = nn.relu %x : tensor<1x64x56x56xf32>
  %1 = nn.sigmoid %0 : tensor<1x64x56x56xf32>
  %2 = nn.tanh %1 : tensor<1x64x56x56xf32>
  %3 = nn.exp %2 : tensor<1x64x56x56xf32>
  %4 = nn.neg %3 : tensor<1x64x56x56xf32>
  %5 = nn.abs %4 : tensor<1x64x56x56xf32>
  %6 = nn.sqrt %5 : tensor<1x64x56x56xf32>
  %7 = nn.leaky_relu %6 alpha 0.125 : tensor<1x64x56x56xf32>
  %8 = nn.clip %7 min 0.0 max 6.0 : tensor<1x64x56x56xf32>
  %9 = nn.clip %8 min -1.5 : tensor<1x64x56x56xf32>
  %10 = nn.clip %9 max 2.5 : tensor<1x64x56x56xf32>
  %11 = nn.clip %10 : tensor<1x64x56x56xf32>
  %12 = nn.relu %h : tensor<2x8xf16>
  func.return %12 : tensor<2x8xf16>
}
// CHECK-LABEL: func.func @unary
// CHECK:      %0 = nn.relu %x : tensor<1x64x56x56xf32>
// CHECK-NEXT: %1 = nn.sigmoid %0 : tensor<1x64x56x56xf32>
// CHECK-NEXT: %2 = nn.tanh %1 : tensor<1x64x56x56xf32>
// CHECK-NEXT: %3 = nn.exp %2 : tensor<1x64x56x56xf32>
// CHECK-NEXT: %4 = nn.neg %3 : tensor<1x64x56x56xf32>
// CHECK-NEXT: %5 = nn.abs %4 : tensor<1x64x56x56xf32>
// CHECK-NEXT: %6 = nn.sqrt %5 : tensor<1x64x56x56xf32>
// CHECK-NEXT: %7 = nn.leaky_relu %6 alpha 1.250000e-01 : tensor<1x64x56x56xf32>
// CHECK-NEXT: %8 = nn.clip %7 min 0.000000e+00 max 6.000000e+00 : tensor<1x64x56x56xf32>
// CHECK-NEXT: %9 = nn.clip %8 min -1.500000e+00 : tensor<1x64x56x56xf32>
// CHECK-NEXT: %10 = nn.clip %9 max 2.500000e+00 : tensor<1x64x56x56xf32>
// CHECK-NEXT: %11 = nn.clip %10 : tensor<1x64x56x56xf32>
// CHECK-NEXT: %12 = nn.relu %h : tensor<2x8xf16>
// GENERIC-LABEL: "func.func"() <{sym_name = "unary"
// GENERIC:      %0 = "nn.relu"(%x) : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
// GENERIC:      %7 = "nn.leaky_relu"(%6) <{alpha = 1.250000e-01 : f32}>
// GENERIC-NEXT: %8 = "nn.clip"(%7) <{min = 0.000000e+00 : f32, max = 6.000000e+00 : f32}>
// GENERIC-NEXT: %9 = "nn.clip"(%8) <{min = -1.500000e+00 : f32}>
// GENERIC-NEXT: %10 = "nn.clip"(%9) <{max = 2.500000e+00 : f32}>
// GENERIC-NEXT: %11 = "nn.clip"(%10) : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>

func.func @binary(%a: tensor<8x1x6x1xf32>, %b: tensor<7x1x5xf32>, %s: tensor<1xf32>) -> tensor<8x7x6x5xf32> {
  %0 = nn.add %a, %b : (tensor<8x1x6x1xf32>, tensor<7x1x5xf32>) -> tensor<8x7x6x5xf32>
  %1 = nn.sub %0, %s : (tensor<8x7x6x5xf32>, tensor<1xf32>) -> tensor<8x7x6x5xf32>
  %2 = nn.mul %s, %1 : (tensor<1xf32>, tensor<8x7x6x5xf32>) -> tensor<8x7x6x5xf32>
  %3 = nn.div %2, %0 : (tensor<8x7x6x5xf32>, tensor<8x7x6x5xf32>) -> tensor<8x7x6x5xf32>
  %4 = nn.sum %3 : (tensor<8x7x6x5xf32>) -> tensor<8x7x6x5xf32>
  %5 = nn.sum %a, %b, %s, %4 : (tensor<8x1x6x1xf32>, tensor<7x1x5xf32>, tensor<1xf32>, tensor<8x7x6x5xf32>) -> tensor<8x7x6x5xf32>
  func.return %5 : tensor<8x7x6x5xf32>
}
// CHECK-LABEL: func.func @binary
// CHECK:      %0 = nn.add %a, %b : (tensor<8x1x6x1xf32>, tensor<7x1x5xf32>) -> tensor<8x7x6x5xf32>
// CHECK-NEXT: %1 = nn.sub %0, %s : (tensor<8x7x6x5xf32>, tensor<1xf32>) -> tensor<8x7x6x5xf32>
// CHECK-NEXT: %2 = nn.mul %s, %1 : (tensor<1xf32>, tensor<8x7x6x5xf32>) -> tensor<8x7x6x5xf32>
// CHECK-NEXT: %3 = nn.div %2, %0 : (tensor<8x7x6x5xf32>, tensor<8x7x6x5xf32>) -> tensor<8x7x6x5xf32>
// CHECK-NEXT: %4 = nn.sum %3 : (tensor<8x7x6x5xf32>) -> tensor<8x7x6x5xf32>
// CHECK-NEXT: %5 = nn.sum %a, %b, %s, %4 : (tensor<8x1x6x1xf32>, tensor<7x1x5xf32>, tensor<1xf32>, tensor<8x7x6x5xf32>) -> tensor<8x7x6x5xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "binary"
// GENERIC:      %0 = "nn.add"(%a, %b) : (tensor<8x1x6x1xf32>, tensor<7x1x5xf32>) -> tensor<8x7x6x5xf32>
// GENERIC:      %5 = "nn.sum"(%a, %b, %s, %4) : (tensor<8x1x6x1xf32>, tensor<7x1x5xf32>, tensor<1xf32>, tensor<8x7x6x5xf32>) -> tensor<8x7x6x5xf32>
