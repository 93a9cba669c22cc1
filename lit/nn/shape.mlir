// Round trip of the data-movement ops and constants, in the pretty and the generic form.
// RUN: nnlayout-opt %s | nnlayout-opt | filecheck %s
// RUN: nnlayout-opt %s --print-op-generic > %t
// RUN: filecheck %s --check-prefix=GENERIC < %t
// RUN: nnlayout-opt %t | filecheck %s

func.func @movement(%a: tensor<1x64x28x28xf32>, %b: tensor<1x32x28x28xf32>) -> (tensor<1x96x28x28xf32>, tensor<1x28x28x64xf32>, tensor<64x784xf32>, tensor<1x50176xf32>) {
  %0 = nn.concat %a, %b, %a axis 1 : (tensor<1x64x28x28xf32>, tensor<1x32x28x28xf32>, tensor<1x64x28x28xf32>) -> tensor<1x160x28x28xf32>
  %1 = nn.concat %a, %b axis -3 : (tensor<1x64x28x28xf32>, tensor<1x32x28x28xf32>) -> tensor<1x96x28x28xf32>
  %2 = nn.transpose %a perm [0, 2, 3, 1] : tensor<1x64x28x28xf32> -> tensor<1x28x28x64xf32>
  %3 = nn.reshape %a : tensor<1x64x28x28xf32> -> tensor<64x784xf32>
  %4 = nn.flatten %a axis 1 : tensor<1x64x28x28xf32> -> tensor<1x50176xf32>
  %5 = nn.flatten %a axis 0 : tensor<1x64x28x28xf32> -> tensor<1x50176xf32>
  %6 = nn.flatten %a axis 4 : tensor<1x64x28x28xf32> -> tensor<50176x1xf32>
  %7 = nn.flatten %a axis -2 : tensor<1x64x28x28xf32> -> tensor<64x784xf32>
  func.return %1, %2, %3, %4 : tensor<1x96x28x28xf32>, tensor<1x28x28x64xf32>, tensor<64x784xf32>, tensor<1x50176xf32>
}
// CHECK-LABEL: func.func @movement
// CHECK:      %0 = nn.concat %a, %b, %a axis 1 : (tensor<1x64x28x28xf32>, tensor<1x32x28x28xf32>, tensor<1x64x28x28xf32>) -> tensor<1x160x28x28xf32>
// CHECK-NEXT: %1 = nn.concat %a, %b axis -3 : (tensor<1x64x28x28xf32>, tensor<1x32x28x28xf32>) -> tensor<1x96x28x28xf32>
// CHECK-NEXT: %2 = nn.transpose %a perm [0, 2, 3, 1] : tensor<1x64x28x28xf32> -> tensor<1x28x28x64xf32>
// CHECK-NEXT: %3 = nn.reshape %a : tensor<1x64x28x28xf32> -> tensor<64x784xf32>
// CHECK-NEXT: %4 = nn.flatten %a axis 1 : tensor<1x64x28x28xf32> -> tensor<1x50176xf32>
// CHECK-NEXT: %5 = nn.flatten %a axis 0 : tensor<1x64x28x28xf32> -> tensor<1x50176xf32>
// CHECK-NEXT: %6 = nn.flatten %a axis 4 : tensor<1x64x28x28xf32> -> tensor<50176x1xf32>
// CHECK-NEXT: %7 = nn.flatten %a axis -2 : tensor<1x64x28x28xf32> -> tensor<64x784xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "movement"
// GENERIC:      %0 = "nn.concat"(%a, %b, %a) <{axis = 1 : i64}> : (tensor<1x64x28x28xf32>, tensor<1x32x28x28xf32>, tensor<1x64x28x28xf32>) -> tensor<1x160x28x28xf32>
// GENERIC:      %2 = "nn.transpose"(%a) <{perm = array<i64: 0, 2, 3, 1>}> : (tensor<1x64x28x28xf32>) -> tensor<1x28x28x64xf32>
// GENERIC-NEXT: %3 = "nn.reshape"(%a) : (tensor<1x64x28x28xf32>) -> tensor<64x784xf32>
// GENERIC-NEXT: %4 = "nn.flatten"(%a) <{axis = 1 : i64}> : (tensor<1x64x28x28xf32>) -> tensor<1x50176xf32>

func.func @constants() -> (tensor<2x2xf32>, tensor<4xf32>, tensor<64x3x7x7xf32>, tensor<3xf16>) {
  %0 = nn.constant dense<[[1.0, -2.0], [0.5, 4.0]]> : tensor<2x2xf32>
  %1 = nn.constant dense<0.25> : tensor<4xf32>
  %2 = nn.constant external "conv1.weight" : tensor<64x3x7x7xf32>
  %3 = nn.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf16> {note = "f16"}
  %4 = nn.constant external "fc.bias" {note = "unused"} : tensor<10xf32>
  func.return %0, %1, %2, %3 : tensor<2x2xf32>, tensor<4xf32>, tensor<64x3x7x7xf32>, tensor<3xf16>
}
// CHECK-LABEL: func.func @constants
// CHECK:      %0 = nn.constant dense<{{\[\[}}1.000000e+00, -2.000000e+00], [5.000000e-01, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT: %1 = nn.constant dense<2.500000e-01> : tensor<4xf32>
// CHECK-NEXT: %2 = nn.constant external "conv1.weight" : tensor<64x3x7x7xf32>
// CHECK-NEXT: %3 = nn.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf16> {note = "f16"}
// CHECK-NEXT: %4 = nn.constant external "fc.bias" {note = "unused"} : tensor<10xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "constants"
// GENERIC:      %0 = "nn.constant"() <{value = dense<{{\[\[}}1.000000e+00, -2.000000e+00], [5.000000e-01, 4.000000e+00]]> : tensor<2x2xf32>}> : () -> tensor<2x2xf32>
// GENERIC:      %2 = "nn.constant"() <{external = "conv1.weight"}> : () -> tensor<64x3x7x7xf32>
// GENERIC:      %4 = "nn.constant"() <{external = "fc.bias"}> {note = "unused"} : () -> tensor<10xf32>
