// sink-movement: transposes and reshapes move below the element-wise ops they feed, and the
// inverse pairs that meet cancel; a movement with another reader, two operands moved
// differently, a broadcast, and a composed transpose that is not the identity stay correct;
// a transpose that moves only axes of size 1 becomes a reshape.
// RUN: nnlayout-opt %s -p sink-movement --split-input-file | filecheck %s

// Two 3-D layers' moves between a convolution's frames and the next one's: all cancel.
func.func @between_layers(%c: tensor<8x4x6x6xf32>) -> tensor<8x4x6x6xf32> {
  %r = nn.reshape %c : tensor<8x4x6x6xf32> -> tensor<1x8x4x6x6xf32>
  %t = nn.transpose %r perm [0, 2, 1, 3, 4] : tensor<1x8x4x6x6xf32> -> tensor<1x4x8x6x6xf32>
  %a = nn.relu %t : tensor<1x4x8x6x6xf32>
  %u = nn.transpose %a perm [0, 2, 1, 3, 4] : tensor<1x4x8x6x6xf32> -> tensor<1x8x4x6x6xf32>
  %f = nn.reshape %u : tensor<1x8x4x6x6xf32> -> tensor<8x4x6x6xf32>
  func.return %f : tensor<8x4x6x6xf32>
}
// CHECK-LABEL: func.func @between_layers
// CHECK-NEXT:    %[[A:.*]] = nn.relu %c : tensor<8x4x6x6xf32>
// CHECK-NEXT:    func.return %[[A]] : tensor<8x4x6x6xf32>

// -----

// A residual add of two values moved alike runs before the move.
func.func @residual(%x: tensor<2x3x4xf32>, %y: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  %tx = nn.transpose %x perm [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %ty = nn.transpose %y perm [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %s = nn.add %tx, %ty : (tensor<3x2x4xf32>, tensor<3x2x4xf32>) -> tensor<3x2x4xf32>
  func.return %s : tensor<3x2x4xf32>
}
// CHECK-LABEL: func.func @residual
// CHECK-NEXT:    %[[S:.*]] = nn.add %x, %y : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %s = nn.transpose %[[S]] perm [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
// CHECK-NEXT:    func.return %s

// -----

// Stays: the transpose has another reader, the operands are moved differently, one
// operand broadcasts.
func.func @stays(%x: tensor<2x3x4xf32>, %y: tensor<4x3x2xf32>, %b: tensor<4xf32>) -> (tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x4xf32>) {
  %tx = nn.transpose %x perm [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %a = nn.relu %tx : tensor<3x2x4xf32>
  %ty = nn.transpose %y perm [1, 2, 0] : tensor<4x3x2xf32> -> tensor<3x2x4xf32>
  %s = nn.add %tx, %ty : (tensor<3x2x4xf32>, tensor<3x2x4xf32>) -> tensor<3x2x4xf32>
  %m = nn.mul %tx, %b : (tensor<3x2x4xf32>, tensor<4xf32>) -> tensor<3x2x4xf32>
  func.return %a, %s, %m, %tx : tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x4xf32>
}
// CHECK-LABEL: func.func @stays
// CHECK-NEXT:    %tx = nn.transpose %x
// CHECK-NEXT:    %a = nn.relu %tx
// CHECK-NEXT:    %ty = nn.transpose %y
// CHECK-NEXT:    %s = nn.add %tx, %ty
// CHECK-NEXT:    %m = nn.mul %tx, %b

// -----

// Two transposes compose into one; two reshapes into one.
func.func @compose(%x: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<4x6xf32>) {
  %t = nn.transpose %x perm [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %u = nn.transpose %t perm [2, 1, 0] : tensor<3x2x4xf32> -> tensor<4x2x3xf32>
  %r = nn.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %q = nn.reshape %r : tensor<6x4xf32> -> tensor<4x6xf32>
  func.return %u, %q : tensor<4x2x3xf32>, tensor<4x6xf32>
}
// CHECK-LABEL: func.func @compose
// CHECK-NEXT:    %u = nn.transpose %x perm [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    %q = nn.reshape %x : tensor<2x3x4xf32> -> tensor<4x6xf32>
// CHECK-NEXT:    func.return %u, %q

// -----

// A channel concat of two frames moved back alike (a reshape putting a unit axis first, a
// transpose) concatenates the frames along their channels, then moves the result once; the
// next layer's move into frames cancels.
func.func @branches(%a: tensor<4x3x6x6xf32>, %b: tensor<4x2x6x6xf32>) -> tensor<4x5x6x6xf32> {
  %ra = nn.reshape %a : tensor<4x3x6x6xf32> -> tensor<1x4x3x6x6xf32>
  %ta = nn.transpose %ra perm [0, 2, 1, 3, 4] : tensor<1x4x3x6x6xf32> -> tensor<1x3x4x6x6xf32>
  %rb = nn.reshape %b : tensor<4x2x6x6xf32> -> tensor<1x4x2x6x6xf32>
  %tb = nn.transpose %rb perm [0, 2, 1, 3, 4] : tensor<1x4x2x6x6xf32> -> tensor<1x2x4x6x6xf32>
  %cat = nn.concat %ta, %tb axis 1 : (tensor<1x3x4x6x6xf32>, tensor<1x2x4x6x6xf32>) -> tensor<1x5x4x6x6xf32>
  %t = nn.transpose %cat perm [0, 2, 1, 3, 4] : tensor<1x5x4x6x6xf32> -> tensor<1x4x5x6x6xf32>
  %f = nn.reshape %t : tensor<1x4x5x6x6xf32> -> tensor<4x5x6x6xf32>
  func.return %f : tensor<4x5x6x6xf32>
}
// CHECK-LABEL: func.func @branches
// CHECK-NEXT:    %[[C:.*]] = nn.concat %a, %b axis 1 : (tensor<4x3x6x6xf32>, tensor<4x2x6x6xf32>) -> tensor<4x5x6x6xf32>
// CHECK-NEXT:    func.return %[[C]] : tensor<4x5x6x6xf32>

// -----

// A transpose that moves only axes of size 1 (a recurrent layer's [steps, 1, 1, hidden] as
// ONNX's Y) is a reshape; one that reorders two longer axes stays a transpose.
func.func @unit_axes(%y: tensor<10x1x1x64xf32>, %z: tensor<6x1x2x5xf32>) -> (tensor<10x1x1x64xf32>, tensor<6x2x1x5xf32>, tensor<1x2x6x5xf32>) {
  %a = nn.transpose %y perm [0, 2, 1, 3] : tensor<10x1x1x64xf32> -> tensor<10x1x1x64xf32>
  %b = nn.transpose %z perm [0, 2, 1, 3] : tensor<6x1x2x5xf32> -> tensor<6x2x1x5xf32>
  %c = nn.transpose %z perm [1, 2, 0, 3] : tensor<6x1x2x5xf32> -> tensor<1x2x6x5xf32>
  func.return %a, %b, %c : tensor<10x1x1x64xf32>, tensor<6x2x1x5xf32>, tensor<1x2x6x5xf32>
}
// CHECK-LABEL: func.func @unit_axes
// CHECK-NEXT: %a = nn.reshape %y : tensor<10x1x1x64xf32> -> tensor<10x1x1x64xf32>
// CHECK-NEXT: %b = nn.reshape %z : tensor<6x1x2x5xf32> -> tensor<6x2x1x5xf32>
// CHECK-NEXT: %c = nn.transpose %z perm [1, 2, 0, 3] : tensor<6x1x2x5xf32> -> tensor<1x2x6x5xf32>

// -----

// A concat operand of size 1 on the moved axis: its transpose also moves only an axis of
// size 1, but it sinks with the other one first (one transpose of the concat), before any
// transpose left becomes a reshape.
func.func @unit_concat_operand(%a: tensor<6x1x2x5xf32>, %b: tensor<6x3x2x5xf32>) -> tensor<6x2x4x5xf32> {
  %ta = nn.transpose %a perm [0, 2, 1, 3] : tensor<6x1x2x5xf32> -> tensor<6x2x1x5xf32>
  %tb = nn.transpose %b perm [0, 2, 1, 3] : tensor<6x3x2x5xf32> -> tensor<6x2x3x5xf32>
  %c = nn.concat %ta, %tb axis 2 : (tensor<6x2x1x5xf32>, tensor<6x2x3x5xf32>) -> tensor<6x2x4x5xf32>
  func.return %c : tensor<6x2x4x5xf32>
}
// CHECK-LABEL: func.func @unit_concat_operand
// CHECK-NEXT: %[[C:.*]] = nn.concat %a, %b axis 1 : (tensor<6x1x2x5xf32>, tensor<6x3x2x5xf32>) -> tensor<6x4x2x5xf32>
// CHECK-NEXT: %c = nn.transpose %[[C]] perm [0, 2, 1, 3] : tensor<6x4x2x5xf32> -> tensor<6x2x4x5xf32>

// -----

// A slice assignment as the dynamo exporter writes it (ScatterND of rows 1.. between
// transposes; imported as the first row and the updates concatenated): the slice of the
// transpose becomes the transpose of a slice, both concat operands are then transposed
// alike and the transpose sinks below the concat, where it meets its inverse: none is left.
func.func @slice_assignment(%x: tensor<2x3x7xf32>, %u: tensor<2x3x6xf32>) -> tensor<2x3x7xf32> {
  %t = nn.transpose %x perm [2, 0, 1] : tensor<2x3x7xf32> -> tensor<7x2x3xf32>
  %tu = nn.transpose %u perm [2, 0, 1] : tensor<2x3x6xf32> -> tensor<6x2x3xf32>
  %p = nn.slice %t starts [0, 0, 0] sizes [1, 2, 3] steps [1, 1, 1] : tensor<7x2x3xf32> -> tensor<1x2x3xf32>
  %c = nn.concat %p, %tu axis 0 : (tensor<1x2x3xf32>, tensor<6x2x3xf32>) -> tensor<7x2x3xf32>
  %y = nn.transpose %c perm [1, 2, 0] : tensor<7x2x3xf32> -> tensor<2x3x7xf32>
  func.return %y : tensor<2x3x7xf32>
}
// CHECK-LABEL: func.func @slice_assignment
// CHECK-NEXT: %[[P:.*]] = nn.slice %x starts [0, 0, 0] sizes [2, 3, 1] steps [1, 1, 1] : tensor<2x3x7xf32> -> tensor<2x3x1xf32>
// CHECK-NEXT: %y = nn.concat %[[P]], %u axis 2 : (tensor<2x3x1xf32>, tensor<2x3x6xf32>) -> tensor<2x3x7xf32>
// CHECK-NEXT: func.return %y

// -----

// A transpose another op also reads stays whole: its slice is not moved above it.
func.func @slice_and_other(%x: tensor<2x3x7xf32>) -> (tensor<1x2x3xf32>, tensor<7x2x3xf32>) {
  %t = nn.transpose %x perm [2, 0, 1] : tensor<2x3x7xf32> -> tensor<7x2x3xf32>
  %p = nn.slice %t starts [0, 0, 0] sizes [1, 2, 3] steps [1, 1, 1] : tensor<7x2x3xf32> -> tensor<1x2x3xf32>
  %r = nn.relu %t : tensor<7x2x3xf32>
  func.return %p, %r : tensor<1x2x3xf32>, tensor<7x2x3xf32>
}
// CHECK-LABEL: func.func @slice_and_other
// CHECK-NEXT: %t = nn.transpose %x perm [2, 0, 1]
// CHECK-NEXT: %p = nn.slice %t starts [0, 0, 0] sizes [1, 2, 3]

// -----

// ViT's q, k, v: slices of whole rows of the transposed qkv (views once bufferized) read by
// other ops than a concat stay slices of the transpose (of the data, they would be copies).
func.func @qkv(%x: tensor<4x3x2xf32>) -> (tensor<1x4x2xf32>, tensor<1x4x2xf32>) {
  %t = nn.transpose %x perm [1, 0, 2] : tensor<4x3x2xf32> -> tensor<3x4x2xf32>
  %q = nn.slice %t starts [0, 0, 0] sizes [1, 4, 2] steps [1, 1, 1] : tensor<3x4x2xf32> -> tensor<1x4x2xf32>
  %k = nn.slice %t starts [1, 0, 0] sizes [1, 4, 2] steps [1, 1, 1] : tensor<3x4x2xf32> -> tensor<1x4x2xf32>
  %a = nn.add %q, %k : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
  func.return %a, %k : tensor<1x4x2xf32>, tensor<1x4x2xf32>
}
// CHECK-LABEL: func.func @qkv
// CHECK-NEXT: %t = nn.transpose %x perm [1, 0, 2]
// CHECK-NEXT: %q = nn.slice %t starts [0, 0, 0]
// CHECK-NEXT: %k = nn.slice %t starts [1, 0, 0]
