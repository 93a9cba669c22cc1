// RUN: nnlayout-opt %s --split-input-file -p 'nest-concats' | filecheck %s

// DenseNet's block: every concat repeats all the features before it; each takes the
// previous concat's result instead (the longest earlier prefix), the first stays.
func.func @chain(%x: tensor<1x16x4x4xf32>, %c1: tensor<1x8x4x4xf32>, %c2: tensor<1x8x4x4xf32>, %c3: tensor<1x8x4x4xf32>) -> (tensor<1x24x4x4xf32>, tensor<1x32x4x4xf32>, tensor<1x40x4x4xf32>) {
  %a = nn.concat %x, %c1 axis 1 : (tensor<1x16x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x24x4x4xf32>
  %b = nn.concat %x, %c1, %c2 axis 1 : (tensor<1x16x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x32x4x4xf32>
  %c = nn.concat %x, %c1, %c2, %c3 axis 1 : (tensor<1x16x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x40x4x4xf32>
  func.return %a, %b, %c : tensor<1x24x4x4xf32>, tensor<1x32x4x4xf32>, tensor<1x40x4x4xf32>
}
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:  %a = nn.concat %x, %c1 axis 1 : (tensor<1x16x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x24x4x4xf32>
// CHECK-NEXT:  %b = nn.concat %a, %c2 axis 1 : (tensor<1x24x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x32x4x4xf32>
// CHECK-NEXT:  %c = nn.concat %b, %c3 axis 1 : (tensor<1x32x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x40x4x4xf32>
// CHECK-NEXT:  func.return %a, %b, %c

// -----

// A negative axis is the same axis: nested, keeping the later concat's spelling.
func.func @negative_axis(%x: tensor<1x16x4x4xf32>, %c1: tensor<1x8x4x4xf32>, %c2: tensor<1x8x4x4xf32>) -> (tensor<1x24x4x4xf32>, tensor<1x32x4x4xf32>) {
  %a = nn.concat %x, %c1 axis 1 : (tensor<1x16x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x24x4x4xf32>
  %b = nn.concat %x, %c1, %c2 axis -3 : (tensor<1x16x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x32x4x4xf32>
  func.return %a, %b : tensor<1x24x4x4xf32>, tensor<1x32x4x4xf32>
}
// CHECK-LABEL: func.func @negative_axis
// CHECK:       %b = nn.concat %a, %c2 axis -3

// -----

// Near misses, left alone: another axis, inputs in another order, not leading (a suffix),
// the earlier concat after the later one, and an earlier concat of one input.
func.func @kept(%x: tensor<1x8x4x4xf32>, %y: tensor<1x8x4x4xf32>, %z: tensor<1x8x4x4xf32>) -> (tensor<1x8x8x4xf32>, tensor<1x24x4x4xf32>, tensor<1x16x4x4xf32>, tensor<1x24x4x4xf32>, tensor<1x16x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x16x4x4xf32>) {
  %h = nn.concat %x, %y axis 2 : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x8x4xf32>
  %c = nn.concat %x, %y, %z axis 1 : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x24x4x4xf32>
  %s = nn.concat %y, %z axis 1 : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x16x4x4xf32>
  %d = nn.concat %y, %x, %z axis 1 : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x24x4x4xf32>
  %late = nn.concat %x, %y axis 1 : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x16x4x4xf32>
  %one = nn.concat %x axis 1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %e = nn.concat %x, %z axis 1 : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x16x4x4xf32>
  func.return %h, %c, %s, %d, %late, %one, %e : tensor<1x8x8x4xf32>, tensor<1x24x4x4xf32>, tensor<1x16x4x4xf32>, tensor<1x24x4x4xf32>, tensor<1x16x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x16x4x4xf32>
}
// CHECK-LABEL: func.func @kept
// CHECK-NEXT:  %h = nn.concat %x, %y axis 2
// CHECK-NEXT:  %c = nn.concat %x, %y, %z axis 1
// CHECK-NEXT:  %s = nn.concat %y, %z axis 1
// CHECK-NEXT:  %d = nn.concat %y, %x, %z axis 1
// CHECK-NEXT:  %late = nn.concat %x, %y axis 1
// CHECK-NEXT:  %one = nn.concat %x axis 1
// CHECK-NEXT:  %e = nn.concat %x, %z axis 1

// -----

// A concat with a kernel already (after select-dispatch) is left alone.
func.func @dispatched(%x: tensor<1x8x4x4xf32>, %y: tensor<1x8x4x4xf32>, %z: tensor<1x8x4x4xf32>) -> (tensor<1x16x4x4xf32>, tensor<1x24x4x4xf32>) {
  %a = nn.concat %x, %y axis 1 : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x16x4x4xf32>
  %b = nn.concat %x, %y, %z axis 1 {kernel = #nn.kernel<"ref.concat", operands = ["", "", ""], results = [""]>} : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x24x4x4xf32>
  func.return %a, %b : tensor<1x16x4x4xf32>, tensor<1x24x4x4xf32>
}
// CHECK-LABEL: func.func @dispatched
// CHECK:       %b = nn.concat %x, %y, %z axis 1
