// RUN: nnlayout-opt %s --split-input-file -p 'fold-pad' | filecheck %s

// A zero pad of H and W before a convolution: its amounts join the convolution's pads.
func.func @zero_pad(%x: tensor<1x8x6x6xf32>, %w: tensor<4x8x3x3xf32>) -> tensor<1x4x9x7xf32> {
  %p = nn.pad %x pads [0, 0, 1, 0, 0, 0, 2, 1] mode "constant" value 0.0 : tensor<1x8x6x6xf32> -> tensor<1x8x9x7xf32>
  %y = nn.conv2d %p, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x8x9x7xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x9x7xf32>
  func.return %y : tensor<1x4x9x7xf32>
}
// CHECK-LABEL: func.func @zero_pad
// CHECK-NEXT:  %y = nn.conv2d %x, %w strides [1, 1] pads [2, 1, 3, 2] dilations [1, 1] groups 1 : (tensor<1x8x6x6xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x9x7xf32>
// CHECK-NEXT:  func.return %y

// -----

// Near misses, left alone: a non-zero value, a reflect pad, a pad of the channels.
func.func @kept(%x: tensor<1x8x6x6xf32>, %w: tensor<4x8x3x3xf32>, %v: tensor<4x10x3x3xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x4x4xf32>) {
  %a = nn.pad %x pads [0, 0, 1, 1, 0, 0, 1, 1] mode "constant" value 1.0 : tensor<1x8x6x6xf32> -> tensor<1x8x8x8xf32>
  %ya = nn.conv2d %a, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x8x8x8xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x6x6xf32>
  %b = nn.pad %x pads [0, 0, 1, 1, 0, 0, 1, 1] mode "reflect" value 0.0 : tensor<1x8x6x6xf32> -> tensor<1x8x8x8xf32>
  %yb = nn.conv2d %b, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x8x8x8xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x6x6xf32>
  %c = nn.pad %x pads [0, 1, 0, 0, 0, 1, 0, 0] mode "constant" value 0.0 : tensor<1x8x6x6xf32> -> tensor<1x10x6x6xf32>
  %yc = nn.conv2d %c, %v strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x10x6x6xf32>, tensor<4x10x3x3xf32>) -> tensor<1x4x4x4xf32>
  func.return %ya, %yb, %yc : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x4x4xf32>
}
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: nn.pad
// CHECK-NOT:     nn.conv2d %x

// -----

// The pad is read elsewhere too: the convolution reads %x, the pad stays for the other use.
func.func @shared(%x: tensor<1x8x6x6xf32>, %w: tensor<4x8x3x3xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x8x8x8xf32>) {
  %p = nn.pad %x pads [0, 0, 1, 1, 0, 0, 1, 1] mode "constant" value 0.0 : tensor<1x8x6x6xf32> -> tensor<1x8x8x8xf32>
  %y = nn.conv2d %p, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x8x8x8xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %y, %p : tensor<1x4x6x6xf32>, tensor<1x8x8x8xf32>
}
// CHECK-LABEL: func.func @shared
// CHECK-NEXT:  %p = nn.pad %x
// CHECK-NEXT:  %y = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1]
