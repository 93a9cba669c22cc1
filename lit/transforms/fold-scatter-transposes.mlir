// fold-scatter-transposes: the dynamo exporter's key/value cache write (the cache transposed
// to put the written axis first, scattered, transposed back) becomes one scatter along the
// original axis; updates transposed otherwise are transposed back; anything else stays.
// RUN: nnlayout-opt %s -p fold-scatter-transposes --split-input-file | filecheck %s

func.func @dynamo_cache_write(%cache: tensor<1x2x8x4xf32>, %pos: tensor<1xi64>, %k: tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32> {
  %t = nn.transpose %cache perm [2, 0, 1, 3] : tensor<1x2x8x4xf32> -> tensor<8x1x2x4xf32>
  %r = nn.transpose %k perm [2, 0, 1, 3] : tensor<1x2x1x4xf32> -> tensor<1x1x2x4xf32>
  %s = nn.scatter %t, %pos, %r axis 0 : (tensor<8x1x2x4xf32>, tensor<1xi64>, tensor<1x1x2x4xf32>) -> tensor<8x1x2x4xf32>
  %y = nn.transpose %s perm [1, 2, 0, 3] : tensor<8x1x2x4xf32> -> tensor<1x2x8x4xf32>
  func.return %y : tensor<1x2x8x4xf32>
}
// CHECK-LABEL: func.func @dynamo_cache_write
// CHECK-NEXT:    %y = nn.scatter %cache, %pos, %k axis 2 : (tensor<1x2x8x4xf32>, tensor<1xi64>, tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32>
// CHECK-NEXT:    func.return %y

// -----

// Updates made in the transposed order: transposed back by a new nn.transpose.
func.func @updates_not_transposed(%cache: tensor<1x2x8x4xf32>, %pos: tensor<1xi64>, %r: tensor<1x1x2x4xf32>) -> tensor<1x2x8x4xf32> {
  %t = nn.transpose %cache perm [2, 0, 1, 3] : tensor<1x2x8x4xf32> -> tensor<8x1x2x4xf32>
  %s = nn.scatter %t, %pos, %r axis 0 : (tensor<8x1x2x4xf32>, tensor<1xi64>, tensor<1x1x2x4xf32>) -> tensor<8x1x2x4xf32>
  %y = nn.transpose %s perm [1, 2, 0, 3] : tensor<8x1x2x4xf32> -> tensor<1x2x8x4xf32>
  func.return %y : tensor<1x2x8x4xf32>
}
// CHECK-LABEL: func.func @updates_not_transposed
// CHECK-NEXT:    %[[BACK:.*]] = nn.transpose %r perm [1, 2, 0, 3] : tensor<1x1x2x4xf32> -> tensor<1x2x1x4xf32>
// CHECK-NEXT:    %y = nn.scatter %cache, %pos, %[[BACK]] axis 2
// CHECK-NEXT:    func.return %y

// -----

// The transposed cache read elsewhere too: it stays, the scatter reads the original.
func.func @transposed_cache_read_twice(%cache: tensor<1x2x8x4xf32>, %pos: tensor<1xi64>, %k: tensor<1x2x1x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<8x1x2x4xf32>) {
  %t = nn.transpose %cache perm [2, 0, 1, 3] : tensor<1x2x8x4xf32> -> tensor<8x1x2x4xf32>
  %r = nn.transpose %k perm [2, 0, 1, 3] : tensor<1x2x1x4xf32> -> tensor<1x1x2x4xf32>
  %s = nn.scatter %t, %pos, %r axis 0 : (tensor<8x1x2x4xf32>, tensor<1xi64>, tensor<1x1x2x4xf32>) -> tensor<8x1x2x4xf32>
  %y = nn.transpose %s perm [1, 2, 0, 3] : tensor<8x1x2x4xf32> -> tensor<1x2x8x4xf32>
  func.return %y, %t : tensor<1x2x8x4xf32>, tensor<8x1x2x4xf32>
}
// CHECK-LABEL: func.func @transposed_cache_read_twice
// CHECK-NEXT:    %t = nn.transpose %cache perm [2, 0, 1, 3]
// CHECK-NEXT:    %y = nn.scatter %cache, %pos, %k axis 2
// CHECK-NEXT:    func.return %y, %t

// -----

// Not the inverse permutation (%y), or the scatter's result read by more than the transpose
// back (%s): left as it is; a permutation that is its own inverse (%w) folds.
func.func @not_inverse(%cache: tensor<2x3x4xf32>, %pos: tensor<1xi64>, %r: tensor<1x2x3xf32>, %q: tensor<1x3x2xf32>) -> (tensor<3x4x2xf32>, tensor<4x2x3xf32>, tensor<2x3x4xf32>) {
  %t = nn.transpose %cache perm [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %s = nn.scatter %t, %pos, %r axis 0 : (tensor<4x2x3xf32>, tensor<1xi64>, tensor<1x2x3xf32>) -> tensor<4x2x3xf32>
  %y = nn.transpose %s perm [2, 0, 1] : tensor<4x2x3xf32> -> tensor<3x4x2xf32>
  %u = nn.transpose %cache perm [2, 1, 0] : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
  %v = nn.scatter %u, %pos, %q axis 0 : (tensor<4x3x2xf32>, tensor<1xi64>, tensor<1x3x2xf32>) -> tensor<4x3x2xf32>
  %w = nn.transpose %v perm [2, 1, 0] : tensor<4x3x2xf32> -> tensor<2x3x4xf32>
  func.return %y, %s, %w : tensor<3x4x2xf32>, tensor<4x2x3xf32>, tensor<2x3x4xf32>
}
// CHECK-LABEL: func.func @not_inverse
// CHECK-NEXT:    %t = nn.transpose %cache perm [2, 0, 1]
// CHECK-NEXT:    %s = nn.scatter %t, %pos, %r axis 0
// CHECK-NEXT:    %y = nn.transpose %s perm [2, 0, 1]
// CHECK-NEXT:    %[[BACK:.*]] = nn.transpose %q perm [2, 1, 0]
// CHECK-NEXT:    %w = nn.scatter %cache, %pos, %[[BACK]] axis 2
// CHECK-NEXT:    func.return %y, %s, %w

// -----

// A reduction is kept: the folded scatter adds along the original axis.
func.func @reduction_kept(%cache: tensor<1x2x8x4xf32>, %pos: tensor<1xi64>, %k: tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32> {
  %t = nn.transpose %cache perm [2, 0, 1, 3] : tensor<1x2x8x4xf32> -> tensor<8x1x2x4xf32>
  %r = nn.transpose %k perm [2, 0, 1, 3] : tensor<1x2x1x4xf32> -> tensor<1x1x2x4xf32>
  %s = nn.scatter %t, %pos, %r axis 0 reduction "add" : (tensor<8x1x2x4xf32>, tensor<1xi64>, tensor<1x1x2x4xf32>) -> tensor<8x1x2x4xf32>
  %y = nn.transpose %s perm [1, 2, 0, 3] : tensor<8x1x2x4xf32> -> tensor<1x2x8x4xf32>
  func.return %y : tensor<1x2x8x4xf32>
}
// CHECK-LABEL: func.func @reduction_kept
// CHECK-NEXT:    %y = nn.scatter %cache, %pos, %k axis 2 reduction "add"
// CHECK-NEXT:    func.return %y
