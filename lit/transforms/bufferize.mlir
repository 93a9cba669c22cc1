// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=avx512},insert-layouts,propagate-layouts,fold-constants,bufferize' | filecheck %s
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=ref},bufferize' | filecheck %s --check-prefix=PLAIN
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=avx512},insert-layouts,propagate-layouts,fold-constants,bufferize' --print-op-generic | nnlayout-opt --split-input-file | filecheck %s

// 12 channels: a 5-D blocked buffer (one block of 16 lanes, 4 of them padding), written into
// the interior of a buffer with a 1-pixel halo; the convolution reads the whole padded buffer
// and pads nothing.
func.func @padded(%x: tensor<1x12x32x32xf32>) -> tensor<1x16x32x32xf32> {
  %w = nn.constant dense<0.5> : tensor<16x12x3x3xf32>
  %y = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x12x32x32xf32>, tensor<16x12x3x3xf32>) -> tensor<1x16x32x32xf32>
  func.return %y : tensor<1x16x32x32xf32>
}
// CHECK-LABEL: func.func @padded(%x: memref<1x12x32x32xf32>) -> memref<1x16x32x32xf32>
// CHECK:      %[[PADDED:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x1x34x34x16xf32>
// CHECK-NEXT: layout.fill_border %[[PADDED]] axes [2, 3] halo [1, 1, 1, 1] value 0.000000e+00 : f32 : memref<1x1x34x34x16xf32>
// CHECK-NEXT: %[[INTERIOR:.*]] = memref.subview %[[PADDED]][0, 0, 1, 1, 0] [1, 1, 32, 32, 16] [1, 1, 1, 1, 1] : memref<1x1x34x34x16xf32> to memref<1x1x32x32x16xf32, strided<[18496, 18496, 544, 16, 1], offset: 560>>
// CHECK-NEXT: nn.compute ins(%x : memref<1x12x32x32xf32>) outs(%[[INTERIOR]] : memref<1x1x32x32x16xf32, strided<[18496, 18496, 544, 16, 1], offset: 560>>) {
// CHECK:        layout.reorder {{.*}} : tensor<1x12x32x32xf32> -> tensor<1x12x32x32xf32, #layout.layout<"NCHW16c">>
// CHECK:      nn.constant dense<5.000000e-01> : tensor<16x12x3x3xf32> -> tensor<16x12x3x3xf32, #layout.layout<"IHW16iO16o">>
// CHECK:      %[[Y:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x1x32x32x16xf32>
// CHECK-NEXT: nn.compute ins(%[[PADDED]], %{{.*}} : memref<1x1x34x34x16xf32>, tensor<16x12x3x3xf32, #layout.layout<"IHW16iO16o">>) outs(%[[Y]] : memref<1x1x32x32x16xf32>) halo [1, 1, 1, 1] {
// CHECK:        nn.conv2d {{.*}} pads [1, 1, 1, 1]
// CHECK:      %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x16x32x32xf32>
// CHECK:      func.return %[[OUT]] : memref<1x16x32x32xf32>

// PLAIN-LABEL: func.func @padded
// PLAIN:      %{{.*}} = memref.alloc() {alignment = 64 : i64} : memref<1x16x32x32xf32>
// PLAIN:      nn.compute ins(%x, %w : memref<1x12x32x32xf32>, tensor<16x12x3x3xf32>)

// -----

// Max pooling pads with -inf; the producer's buffer carries that border.
func.func @pool(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32> {
  %r = nn.relu %x : tensor<1x16x8x8xf32>
  %p = nn.max_pool2d %r kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x16x8x8xf32> -> tensor<1x16x4x4xf32>
  func.return %p : tensor<1x16x4x4xf32>
}
// PLAIN-LABEL: func.func @pool
// PLAIN:      %[[R:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x16x10x10xf32>
// PLAIN-NEXT: layout.fill_border %[[R]] axes [2, 3] halo [1, 1, 1, 1] value 0xff800000 : f32 : memref<1x16x10x10xf32>
// PLAIN-NEXT: %[[RI:.*]] = memref.subview %[[R]][0, 0, 1, 1] [1, 16, 8, 8] [1, 1, 1, 1] : memref<1x16x10x10xf32> to memref<1x16x8x8xf32, strided<[1600, 100, 10, 1], offset: 11>>
// PLAIN-NEXT: nn.compute ins(%x : memref<1x16x8x8xf32>) outs(%[[RI]] : memref<1x16x8x8xf32, strided<[1600, 100, 10, 1], offset: 11>>)
// PLAIN:      nn.compute ins(%[[R]] : memref<1x16x10x10xf32>) outs(%{{.*}} : memref<1x16x4x4xf32>) halo [1, 1, 1, 1]

// -----

// Concat in place: each producer writes its channel slice; no copy, no concat op left.
func.func @concat(%x: tensor<1x16x8x8xf32>) -> tensor<1x32x8x8xf32> {
  %a = nn.relu %x : tensor<1x16x8x8xf32>
  %b = nn.sigmoid %x : tensor<1x16x8x8xf32>
  %c = nn.concat %a, %b axis 1 : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<1x32x8x8xf32>
  %r = nn.tanh %c : tensor<1x32x8x8xf32>
  func.return %r : tensor<1x32x8x8xf32>
}
// PLAIN-LABEL: func.func @concat
// PLAIN:      %[[C:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x32x8x8xf32>
// PLAIN-NEXT: %[[A:.*]] = memref.subview %[[C]][0, 0, 0, 0] [1, 16, 8, 8] [1, 1, 1, 1] : memref<1x32x8x8xf32> to memref<1x16x8x8xf32, strided<[2048, 64, 8, 1]>>
// PLAIN-NEXT: nn.compute ins(%x : memref<1x16x8x8xf32>) outs(%[[A]] : memref<1x16x8x8xf32, strided<[2048, 64, 8, 1]>>)
// PLAIN:      %[[B:.*]] = memref.subview %[[C]][0, 16, 0, 0] [1, 16, 8, 8] [1, 1, 1, 1] : memref<1x32x8x8xf32> to memref<1x16x8x8xf32, strided<[2048, 64, 8, 1], offset: 1024>>
// PLAIN-NEXT: nn.compute ins(%x : memref<1x16x8x8xf32>) outs(%[[B]] : memref<1x16x8x8xf32, strided<[2048, 64, 8, 1], offset: 1024>>)
// PLAIN-NOT:  nn.concat
// PLAIN:      nn.compute ins(%[[C]] : memref<1x32x8x8xf32>)
// PLAIN:        nn.tanh

// -----

// %c lives in %cat's buffer and is read again by %out: the batch norm, which could run in
// place and share max_pool's -inf halo, must not write over %cat's buffer (fuzz seed 16,
// program 42). It writes into the halo'd buffer of its own.
func.func @concat_member_read_later(%x: tensor<2x4x1x3xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>) -> tensor<2x12x1x3xf32> {
  %c = nn.clip %x max 2.0 : tensor<2x4x1x3xf32>
  %cat = nn.concat %c, %c axis 1 : (tensor<2x4x1x3xf32>, tensor<2x4x1x3xf32>) -> tensor<2x8x1x3xf32>
  %n = nn.batch_norm %cat, %s, %b, %m, %v epsilon 1.0e-05 : (tensor<2x8x1x3xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x1x3xf32>
  %p = nn.max_pool2d %n kernel [2, 2] strides [1, 1] pads [1, 0, 1, 2] dilations [2, 2] ceil_mode : tensor<2x8x1x3xf32> -> tensor<2x8x1x3xf32>
  %out = nn.concat %p, %c axis 1 : (tensor<2x8x1x3xf32>, tensor<2x4x1x3xf32>) -> tensor<2x12x1x3xf32>
  func.return %out : tensor<2x12x1x3xf32>
}
// PLAIN-LABEL: func.func @concat_member_read_later
// PLAIN:      %[[CAT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x8x1x3xf32>
// PLAIN:      %[[N:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x8x3x5xf32>
// PLAIN:      %[[NI:.*]] = memref.subview %[[N]][0, 0, 1, 0] [2, 8, 1, 3]
// PLAIN:      nn.compute ins(%[[CAT]], %s, %b, %m, %v : {{.*}}) outs(%[[NI]] : {{.*}})
// PLAIN:      nn.compute ins(%[[N]] : memref<2x8x3x5xf32>) {{.*}} halo [1, 0, 1, 2]
// PLAIN:      "memref.copy"(%c, %{{.*}})
