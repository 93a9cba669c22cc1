// RUN: nnlayout-opt %s --split-input-file -p 'split-image-conv' | filecheck %s

// A 7x7 stem over 3 channels: one convolution per input channel, summed; the bias goes to
// the last one, the name to the sum.
func.func @stem(%x: tensor<1x3x32x32xf32>) -> tensor<1x8x16x16xf32> {
  %w = nn.constant external "w" : tensor<8x3x7x7xf32>
  %b = nn.constant external "b" : tensor<8xf32>
  %y = nn.conv2d %x, %w, %b strides [2, 2] pads [3, 3, 3, 3] dilations [1, 1] groups 1 : (tensor<1x3x32x32xf32>, tensor<8x3x7x7xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32>
  func.return %y : tensor<1x8x16x16xf32>
}
// CHECK-LABEL: func.func @stem
// CHECK:      %[[X0:.*]] = nn.slice %x starts [0, 0, 0, 0] sizes [1, 1, 32, 32] steps [1, 1, 1, 1] : tensor<1x3x32x32xf32> -> tensor<1x1x32x32xf32>
// CHECK-NEXT: %[[W0:.*]] = nn.slice %w starts [0, 0, 0, 0] sizes [8, 1, 7, 7] steps [1, 1, 1, 1] : tensor<8x3x7x7xf32> -> tensor<8x1x7x7xf32>
// CHECK-NEXT: %[[C0:.*]] = nn.conv2d %[[X0]], %[[W0]] strides [2, 2] pads [3, 3, 3, 3] dilations [1, 1] groups 1 : (tensor<1x1x32x32xf32>, tensor<8x1x7x7xf32>) -> tensor<1x8x16x16xf32>
// CHECK-NEXT: %[[X1:.*]] = nn.slice %x starts [0, 1, 0, 0] sizes [1, 1, 32, 32]
// CHECK-NEXT: %[[W1:.*]] = nn.slice %w starts [0, 1, 0, 0] sizes [8, 1, 7, 7]
// CHECK-NEXT: %[[C1:.*]] = nn.conv2d %[[X1]], %[[W1]] strides [2, 2] pads [3, 3, 3, 3] dilations [1, 1] groups 1 :
// CHECK-NEXT: %[[S1:.*]] = nn.add %[[C1]], %[[C0]]
// CHECK-NEXT: %[[X2:.*]] = nn.slice %x starts [0, 2, 0, 0]
// CHECK-NEXT: %[[W2:.*]] = nn.slice %w starts [0, 2, 0, 0]
// CHECK-NEXT: %[[C2:.*]] = nn.conv2d %[[X2]], %[[W2]], %b strides [2, 2]
// CHECK-NEXT: %y = nn.add %[[C2]], %[[S1]]
// CHECK-NEXT: func.return %y

// -----

// Left whole: a 3x3 stem (27-term sums), 16 input channels, a grouped convolution, a weight
// computed per run.
func.func @kept(%x: tensor<1x3x32x32xf32>, %x16: tensor<1x16x32x32xf32>, %wr: tensor<8x3x7x7xf32>) -> (tensor<1x8x32x32xf32>, tensor<1x8x32x32xf32>, tensor<1x3x32x32xf32>, tensor<1x8x32x32xf32>) {
  %w3 = nn.constant external "w3" : tensor<8x3x3x3xf32>
  %w16 = nn.constant external "w16" : tensor<8x16x7x7xf32>
  %wg = nn.constant external "wg" : tensor<3x1x7x7xf32>
  %a = nn.conv2d %x, %w3 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x32x32xf32>
  %b = nn.conv2d %x16, %w16 strides [1, 1] pads [3, 3, 3, 3] dilations [1, 1] groups 1 : (tensor<1x16x32x32xf32>, tensor<8x16x7x7xf32>) -> tensor<1x8x32x32xf32>
  %c = nn.conv2d %x, %wg strides [1, 1] pads [3, 3, 3, 3] dilations [1, 1] groups 3 : (tensor<1x3x32x32xf32>, tensor<3x1x7x7xf32>) -> tensor<1x3x32x32xf32>
  %d = nn.conv2d %x, %wr strides [1, 1] pads [3, 3, 3, 3] dilations [1, 1] groups 1 : (tensor<1x3x32x32xf32>, tensor<8x3x7x7xf32>) -> tensor<1x8x32x32xf32>
  func.return %a, %b, %c, %d : tensor<1x8x32x32xf32>, tensor<1x8x32x32xf32>, tensor<1x3x32x32xf32>, tensor<1x8x32x32xf32>
}
// CHECK-LABEL: func.func @kept
// CHECK-NOT:   nn.slice
// CHECK-COUNT-4: nn.conv2d
// CHECK-NOT:   nn.slice
// CHECK:       func.return %a, %b, %c, %d
