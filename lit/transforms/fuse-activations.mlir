// RUN: nnlayout-opt %s --split-input-file -p fuse-activations | filecheck %s

// SiLU as the classic exporter writes it: Sigmoid then Mul.
func.func @silu(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %s = nn.sigmoid %x : tensor<1x8x4x4xf32>
  %y = nn.mul %x, %s : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  func.return %y : tensor<1x8x4x4xf32>
}
// CHECK-LABEL: func.func @silu
// CHECK-NEXT:    %y = nn.swish %x : tensor<1x8x4x4xf32>
// CHECK-NEXT:    func.return %y

// -----

// Either operand order.
func.func @silu_swapped(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %s = nn.sigmoid %x : tensor<1x8x4x4xf32>
  %y = nn.mul %s, %x : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  func.return %y : tensor<1x8x4x4xf32>
}
// CHECK-LABEL: func.func @silu_swapped
// CHECK-NEXT:    %y = nn.swish %x : tensor<1x8x4x4xf32>
// CHECK-NEXT:    func.return %y

// -----

// The sigmoid has another use: it must stay, so nothing fuses.
func.func @silu_sigmoid_also_returned(%x: tensor<1x8x4x4xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) {
  %s = nn.sigmoid %x : tensor<1x8x4x4xf32>
  %y = nn.mul %x, %s : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  func.return %y, %s : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
}
// CHECK-LABEL: func.func @silu_sigmoid_also_returned
// CHECK-NEXT:    %s = nn.sigmoid %x
// CHECK-NEXT:    %y = nn.mul %x, %s
// CHECK-NOT:     nn.swish

// -----

// A gate computed from another value (squeeze-and-excitation) is no SiLU.
func.func @gate_of_another_value(%x: tensor<1x8x4x4xf32>, %z: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %s = nn.sigmoid %z : tensor<1x8x4x4xf32>
  %y = nn.mul %x, %s : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  func.return %y : tensor<1x8x4x4xf32>
}
// CHECK-LABEL: func.func @gate_of_another_value
// CHECK-NEXT:    %s = nn.sigmoid %z
// CHECK-NEXT:    %y = nn.mul %x, %s

// -----

// HardSwish as torch wrote it before opset 14: x * HardSigmoid(x; 1/6, 1/2).
func.func @hardswish(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %h = nn.hardsigmoid %x alpha 0.166666672 beta 0.5 : tensor<1x8x4x4xf32>
  %y = nn.mul %x, %h : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  func.return %y : tensor<1x8x4x4xf32>
}
// CHECK-LABEL: func.func @hardswish
// CHECK-NEXT:    %y = nn.hardswish %x : tensor<1x8x4x4xf32>
// CHECK-NEXT:    func.return %y

// -----

// HardSigmoid's default alpha (0.2) times x is not HardSwish.
func.func @hardsigmoid_default_times_x(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %h = nn.hardsigmoid %x alpha 0.2 beta 0.5 : tensor<1x8x4x4xf32>
  %y = nn.mul %x, %h : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  func.return %y : tensor<1x8x4x4xf32>
}
// CHECK-LABEL: func.func @hardsigmoid_default_times_x
// CHECK-NEXT:    %h = nn.hardsigmoid %x
// CHECK-NEXT:    %y = nn.mul %x, %h

// -----

// Exact GELU as the classic exporter writes it: ((x * (erf(x / sqrt 2) + 1)) * 0.5).
func.func @gelu_erf(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %c = nn.constant dense<1.41421354> : tensor<f32>
  %d = nn.div %x, %c : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %e = nn.erf %d : tensor<1x8xf32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %a = nn.add %e, %one : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %m = nn.mul %x, %a : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %y = nn.mul %m, %half : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  func.return %y : tensor<1x8xf32>
}
// CHECK-LABEL: func.func @gelu_erf
// CHECK-NEXT:    %y = nn.gelu %x : tensor<1x8xf32>
// CHECK-NEXT:    func.return %y

// -----

// Another grouping, 0.5 * x first, x * (1 / sqrt 2), 1 + erf: the same GELU.
func.func @gelu_erf_regrouped(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %half = nn.constant dense<0.5> : tensor<1xf32>
  %h = nn.mul %half, %x : (tensor<1xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %c = nn.constant dense<0.707106769> : tensor<f32>
  %d = nn.mul %c, %x : (tensor<f32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %e = nn.erf %d : tensor<1x8xf32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %a = nn.add %one, %e : (tensor<f32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %y = nn.mul %h, %a : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  func.return %y : tensor<1x8xf32>
}
// CHECK-LABEL: func.func @gelu_erf_regrouped
// CHECK-NEXT:    %y = nn.gelu %x : tensor<1x8xf32>
// CHECK-NEXT:    func.return %y

// -----

// A constant that is not sqrt 2 in float32 (1.4142): no GELU.
func.func @gelu_wrong_constant(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %c = nn.constant dense<1.4142> : tensor<f32>
  %d = nn.div %x, %c : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %e = nn.erf %d : tensor<1x8xf32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %a = nn.add %e, %one : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %m = nn.mul %x, %a : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %y = nn.mul %m, %half : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  func.return %y : tensor<1x8xf32>
}
// CHECK-LABEL: func.func @gelu_wrong_constant
// CHECK-NOT:     nn.gelu
// CHECK:         nn.erf
// CHECK:         func.return %y

// -----

// The erf is read elsewhere too: it must stay, so nothing fuses.
func.func @gelu_erf_extra_user(%x: tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>) {
  %c = nn.constant dense<1.41421354> : tensor<f32>
  %d = nn.div %x, %c : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %e = nn.erf %d : tensor<1x8xf32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %a = nn.add %e, %one : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %m = nn.mul %x, %a : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %y = nn.mul %m, %half : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  func.return %y, %e : tensor<1x8xf32>, tensor<1x8xf32>
}
// CHECK-LABEL: func.func @gelu_erf_extra_user
// CHECK-NOT:     nn.gelu
// CHECK:         func.return %y, %e

// -----

// A constant shared with another op stays for it.
func.func @gelu_shared_constant(%x: tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>) {
  %c = nn.constant dense<1.41421354> : tensor<f32>
  %d = nn.div %x, %c : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %e = nn.erf %d : tensor<1x8xf32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %a = nn.add %e, %one : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %m = nn.mul %x, %a : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %y = nn.mul %m, %half : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %z = nn.add %x, %one : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  func.return %y, %z : tensor<1x8xf32>, tensor<1x8xf32>
}
// CHECK-LABEL: func.func @gelu_shared_constant
// CHECK-NEXT:    %one = nn.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %y = nn.gelu %x : tensor<1x8xf32>
// CHECK-NEXT:    %z = nn.add %x, %one
// CHECK-NEXT:    func.return %y, %z

// -----

// A "scalar" constant of higher rank broadcasts x to another shape: no GELU.
func.func @gelu_constant_raises_rank(%x: tensor<8xf32>) -> tensor<1x8xf32> {
  %c = nn.constant dense<1.41421354> : tensor<f32>
  %d = nn.div %x, %c : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %e = nn.erf %d : tensor<8xf32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %a = nn.add %e, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %m = nn.mul %x, %a : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %half = nn.constant dense<0.5> : tensor<1x1xf32>
  %y = nn.mul %m, %half : (tensor<8xf32>, tensor<1x1xf32>) -> tensor<1x8xf32>
  func.return %y : tensor<1x8xf32>
}
// CHECK-LABEL: func.func @gelu_constant_raises_rank
// CHECK-NOT:     nn.gelu
// CHECK:         func.return %y

// -----

// tanh GELU as the classic exporter writes it:
// 0.5 * (x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * (x * (x * x)))))).
func.func @gelu_tanh(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %xx = nn.mul %x, %x : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %cube = nn.mul %x, %xx : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %kappa = nn.constant dense<0.044715> : tensor<f32>
  %k = nn.mul %kappa, %cube : (tensor<f32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %s = nn.add %x, %k : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %beta = nn.constant dense<0.797884583> : tensor<f32>
  %inner = nn.mul %beta, %s : (tensor<f32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %t = nn.tanh %inner : tensor<1x8xf32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %a = nn.add %one, %t : (tensor<f32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %m = nn.mul %x, %a : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %y = nn.mul %half, %m : (tensor<f32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  func.return %y : tensor<1x8xf32>
}
// CHECK-LABEL: func.func @gelu_tanh
// CHECK-NEXT:    %y = nn.gelu %x approximate "tanh" : tensor<1x8xf32>
// CHECK-NEXT:    func.return %y

// -----

// The cube as Pow(x, 3), as dynamo writes it.
func.func @gelu_tanh_pow(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %cube = nn.pow %x exponent 3.0 : tensor<1x8xf32>
  %kappa = nn.constant dense<0.044715> : tensor<f32>
  %k = nn.mul %cube, %kappa : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %s = nn.add %k, %x : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %beta = nn.constant dense<0.797884583> : tensor<f32>
  %inner = nn.mul %s, %beta : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %t = nn.tanh %inner : tensor<1x8xf32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %a = nn.add %t, %one : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %h = nn.mul %x, %half : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %y = nn.mul %h, %a : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  func.return %y : tensor<1x8xf32>
}
// CHECK-LABEL: func.func @gelu_tanh_pow
// CHECK-NEXT:    %y = nn.gelu %x approximate "tanh" : tensor<1x8xf32>
// CHECK-NEXT:    func.return %y

// -----

// x^2 instead of x^3 in the polynomial: no GELU.
func.func @gelu_tanh_square(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %cube = nn.pow %x exponent 2.0 : tensor<1x8xf32>
  %kappa = nn.constant dense<0.044715> : tensor<f32>
  %k = nn.mul %cube, %kappa : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %s = nn.add %k, %x : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %beta = nn.constant dense<0.797884583> : tensor<f32>
  %inner = nn.mul %s, %beta : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %t = nn.tanh %inner : tensor<1x8xf32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %a = nn.add %t, %one : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %h = nn.mul %x, %half : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %y = nn.mul %h, %a : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  func.return %y : tensor<1x8xf32>
}
// CHECK-LABEL: func.func @gelu_tanh_square
// CHECK-NOT:     nn.gelu
// CHECK:         nn.tanh
// CHECK:         func.return %y

// -----

// torch.where(x > 0, x, 0.1 * x): a leaky ReLU; the comparison, the product and their
// constants go.
func.func @where_leaky(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %zero = nn.constant dense<0.0> : tensor<f32>
  %a = nn.constant dense<0.1> : tensor<f32>
  %m = nn.compare "gt" %x, %zero : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xi1>
  %s = nn.mul %x, %a : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32>
  %y = nn.where %m, %x, %s : (tensor<1x8x4x4xi1>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  func.return %y : tensor<1x8x4x4xf32>
}
// CHECK-LABEL: func.func @where_leaky
// CHECK-NEXT:    %y = nn.leaky_relu %x alpha 1.000000e-01 : tensor<1x8x4x4xf32>
// CHECK-NEXT:    func.return %y

// -----

// where(0 >= x, a * x, x), the comparison and the product the other way round: x <= 0.
func.func @where_leaky_mirrored(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %zero = nn.constant dense<0.0> : tensor<1xf32>
  %a = nn.constant dense<0.25> : tensor<f32>
  %m = nn.compare "ge" %zero, %x : (tensor<1xf32>, tensor<2x5xf32>) -> tensor<2x5xi1>
  %s = nn.mul %a, %x : (tensor<f32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  %y = nn.where %m, %s, %x : (tensor<2x5xi1>, tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}
// CHECK-LABEL: func.func @where_leaky_mirrored
// CHECK-NEXT:    %y = nn.leaky_relu %x alpha 2.500000e-01 : tensor<2x5xf32>
// CHECK-NEXT:    func.return %y

// -----

// Not a leaky ReLU: a negative slope (at -0.0 the selection gives +0.0, leaky_relu -0.0), a
// selection keeping the product where x > 0, and a mask read twice.
func.func @where_not_leaky(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>) {
  %zero = nn.constant dense<0.0> : tensor<f32>
  %neg = nn.constant dense<-0.1> : tensor<f32>
  %a = nn.constant dense<0.1> : tensor<f32>
  %m0 = nn.compare "gt" %x, %zero : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
  %s0 = nn.mul %x, %neg : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %y0 = nn.where %m0, %x, %s0 : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %m1 = nn.compare "gt" %x, %zero : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
  %s1 = nn.mul %x, %a : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %y1 = nn.where %m1, %s1, %x : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %m2 = nn.compare "gt" %x, %zero : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
  %s2 = nn.mul %x, %a : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %y2 = nn.where %m2, %x, %s2 : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y0, %y1, %y2, %m2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>
}
// CHECK-LABEL: func.func @where_not_leaky
// CHECK-NOT:     nn.leaky_relu
// CHECK:         func.return
