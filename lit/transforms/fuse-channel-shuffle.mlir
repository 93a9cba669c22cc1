// RUN: nnlayout-opt %s --split-input-file -p 'fuse-channel-shuffle' | filecheck %s

// ShuffleNet's channel shuffle, as both exporters write it: one nn.channel_shuffle.
func.func @shuffle(%x: tensor<1x12x5x5xf32>) -> tensor<1x12x5x5xf32> {
  %r = nn.reshape %x : tensor<1x12x5x5xf32> -> tensor<1x3x4x5x5xf32>
  %t = nn.transpose %r perm [0, 2, 1, 3, 4] : tensor<1x3x4x5x5xf32> -> tensor<1x4x3x5x5xf32>
  %y = nn.reshape %t : tensor<1x4x3x5x5xf32> -> tensor<1x12x5x5xf32>
  func.return %y : tensor<1x12x5x5xf32>
}
// CHECK-LABEL: func.func @shuffle
// CHECK-NEXT:  %y = nn.channel_shuffle %x groups 3 : tensor<1x12x5x5xf32>
// CHECK-NEXT:  func.return %y

// -----

// The grouped view is read elsewhere too: it stays, the shuffle is still one op.
func.func @shared_view(%x: tensor<1x12x5x5xf32>) -> (tensor<1x12x5x5xf32>, tensor<1x3x4x5x5xf32>) {
  %r = nn.reshape %x : tensor<1x12x5x5xf32> -> tensor<1x3x4x5x5xf32>
  %t = nn.transpose %r perm [0, 2, 1, 3, 4] : tensor<1x3x4x5x5xf32> -> tensor<1x4x3x5x5xf32>
  %y = nn.reshape %t : tensor<1x4x3x5x5xf32> -> tensor<1x12x5x5xf32>
  func.return %y, %r : tensor<1x12x5x5xf32>, tensor<1x3x4x5x5xf32>
}
// CHECK-LABEL: func.func @shared_view
// CHECK-NEXT:  %r = nn.reshape %x
// CHECK-NOT:   nn.transpose
// CHECK-NEXT:  %y = nn.channel_shuffle %x groups 3

// -----

// Near misses, left alone: another perm (the spatial axes swapped too), a split of the
// channels that is not [groups, C / groups] over H and W, and a result of another shape.
func.func @other_perm(%x: tensor<1x12x5x5xf32>) -> tensor<1x12x5x5xf32> {
  %r = nn.reshape %x : tensor<1x12x5x5xf32> -> tensor<1x3x4x5x5xf32>
  %t = nn.transpose %r perm [0, 2, 1, 4, 3] : tensor<1x3x4x5x5xf32> -> tensor<1x4x3x5x5xf32>
  %y = nn.reshape %t : tensor<1x4x3x5x5xf32> -> tensor<1x12x5x5xf32>
  func.return %y : tensor<1x12x5x5xf32>
}
// CHECK-LABEL: func.func @other_perm
// CHECK-NOT:   nn.channel_shuffle
// CHECK:       nn.transpose %r perm [0, 2, 1, 4, 3]

// -----

func.func @split_over_height(%x: tensor<1x12x6x5xf32>) -> tensor<1x12x6x5xf32> {
  %r = nn.reshape %x : tensor<1x12x6x5xf32> -> tensor<1x12x2x3x5xf32>
  %t = nn.transpose %r perm [0, 2, 1, 3, 4] : tensor<1x12x2x3x5xf32> -> tensor<1x2x12x3x5xf32>
  %y = nn.reshape %t : tensor<1x2x12x3x5xf32> -> tensor<1x12x6x5xf32>
  func.return %y : tensor<1x12x6x5xf32>
}
// CHECK-LABEL: func.func @split_over_height
// CHECK-NOT:   nn.channel_shuffle
// CHECK:       nn.transpose

// -----

func.func @flattened_result(%x: tensor<1x12x5x5xf32>) -> tensor<1x12x25xf32> {
  %r = nn.reshape %x : tensor<1x12x5x5xf32> -> tensor<1x3x4x5x5xf32>
  %t = nn.transpose %r perm [0, 2, 1, 3, 4] : tensor<1x3x4x5x5xf32> -> tensor<1x4x3x5x5xf32>
  %y = nn.reshape %t : tensor<1x4x3x5x5xf32> -> tensor<1x12x25xf32>
  func.return %y : tensor<1x12x25xf32>
}
// CHECK-LABEL: func.func @flattened_result
// CHECK-NOT:   nn.channel_shuffle
// CHECK:       nn.transpose
