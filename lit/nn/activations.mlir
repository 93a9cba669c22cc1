// Round trip of the activations of dialects/nn/activations.py, pretty and generic.
// RUN: nnlayout-opt %s | nnlayout-opt | filecheck %s
// RUN: nnlayout-opt %s --print-op-generic > %t
// RUN: filecheck %s --check-prefix=GENERIC < %t
// RUN: nnlayout-opt %t | filecheck %s

func.func @activations(%x: tensor<1x5x4x4xf32>) -> tensor<1x5x4x4xf32> {
  %0 = nn.hardswish %x : tensor<1x5x4x4xf32>
  %1 = nn.hardsigmoid %0 alpha 0.2 beta 0.5 : tensor<1x5x4x4xf32>
  %2 = nn.gelu %1 : tensor<1x5x4x4xf32>
  %3 = nn.gelu %2 approximate "tanh" : tensor<1x5x4x4xf32>
  %4 = nn.erf %3 : tensor<1x5x4x4xf32>
  %5 = nn.elu %4 alpha 1.0 : tensor<1x5x4x4xf32>
  %6 = nn.selu %5 alpha 1.67326319 gamma 1.05070102 : tensor<1x5x4x4xf32>
  %7 = nn.softplus %6 : tensor<1x5x4x4xf32>
  %8 = nn.mish %7 : tensor<1x5x4x4xf32>
  %9 = nn.swish %8 : tensor<1x5x4x4xf32>
  %10 = nn.pow %9 exponent 2.0 : tensor<1x5x4x4xf32>
  %11 = nn.reciprocal %10 : tensor<1x5x4x4xf32>
  %12 = nn.log %11 : tensor<1x5x4x4xf32>
  func.return %12 : tensor<1x5x4x4xf32>
}
// CHECK-LABEL: func.func @activations
// CHECK:      %0 = nn.hardswish %x : tensor<1x5x4x4xf32>
// CHECK-NEXT: %1 = nn.hardsigmoid %0 alpha 2.000000e-01 beta 5.000000e-01 : tensor<1x5x4x4xf32>
// CHECK-NEXT: %2 = nn.gelu %1 : tensor<1x5x4x4xf32>
// CHECK-NEXT: %3 = nn.gelu %2 approximate "tanh" : tensor<1x5x4x4xf32>
// CHECK-NEXT: %4 = nn.erf %3 : tensor<1x5x4x4xf32>
// CHECK-NEXT: %5 = nn.elu %4 alpha 1.000000e+00 : tensor<1x5x4x4xf32>
// CHECK-NEXT: %6 = nn.selu %5 alpha 1.67326319 gamma 1.05070102 : tensor<1x5x4x4xf32>
// CHECK-NEXT: %7 = nn.softplus %6 : tensor<1x5x4x4xf32>
// CHECK-NEXT: %8 = nn.mish %7 : tensor<1x5x4x4xf32>
// CHECK-NEXT: %9 = nn.swish %8 : tensor<1x5x4x4xf32>
// CHECK-NEXT: %10 = nn.pow %9 exponent 2.000000e+00 : tensor<1x5x4x4xf32>
// CHECK-NEXT: %11 = nn.reciprocal %10 : tensor<1x5x4x4xf32>
// CHECK-NEXT: %12 = nn.log %11 : tensor<1x5x4x4xf32>
// GENERIC: "nn.hardsigmoid"(%{{.*}}) <{alpha = 2.000000e-01 : f32, beta = 5.000000e-01 : f32}>
// GENERIC: "nn.gelu"(%{{.*}}) <{approximate = "tanh"}>
// GENERIC: "nn.pow"(%{{.*}}) <{exponent = 2.000000e+00 : f32}>

// A convolution fused with an activation that has attributes carries them.
func.func @fused(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
  %0 = nn.fused_conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "hardsigmoid" alpha 0.2 beta 0.5 : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  %1 = nn.fused_conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "gelu" approximate "tanh" : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  %2 = nn.fused_conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "hardswish" : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  func.return %0 : tensor<1x8x8x8xf32>
}
// CHECK-LABEL: func.func @fused
// CHECK:      activation "hardsigmoid" alpha 2.000000e-01 beta 5.000000e-01 :
// CHECK:      activation "gelu" approximate "tanh" :
// CHECK:      activation "hardswish" :
