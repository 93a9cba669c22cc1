// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=ref},bufferize' | filecheck %s --check-prefix=BEFORE
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=ref},bufferize,plan-memory,verify-memory-plan' | filecheck %s
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=ref},bufferize,plan-memory{report=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=REPORT

// relu -> conv -> relu -> neg: every buffer is 512 bytes. The conv's output cannot take its
// input's bytes (conv2d_ref is not in place), the second relu overwrites the conv's output
// (relu_ref: in_place = 0), and the returned %n stays a separate allocation.
func.func @chain(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %w = nn.constant dense<0.1> : tensor<8x8x1x1xf32>
  %r = nn.relu %x : tensor<1x8x4x4xf32>
  %c = nn.conv2d %r, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %s = nn.relu %c : tensor<1x8x4x4xf32>
  %n = nn.neg %s : tensor<1x8x4x4xf32>
  func.return %n : tensor<1x8x4x4xf32>
}
// BEFORE-LABEL: func.func @chain
// BEFORE-COUNT-4: memref.alloc() {alignment = 64 : i64} : memref<1x8x4x4xf32>
// BEFORE-NOT: memref.view

// CHECK-LABEL: func.func @chain
// CHECK-SAME: nnlayout.arena_bytes = 1024 : i64, nnlayout.lower_bound_bytes = 1024 : i64, nnlayout.unplanned_bytes = 1536 : i64, nnlayout.padding_bytes = 0 : i64, nnlayout.halo_bytes = 0 : i64
// CHECK-NEXT: %arena = memref.alloc() {alignment = 64 : i64} : memref<1024xi8>
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %c512 = arith.constant 512 : index
// CHECK-NOT:  arith.constant
// CHECK:      %r = memref.view %arena[%c0][] : memref<1024xi8> to memref<1x8x4x4xf32>
// CHECK:      %c = memref.view %arena[%c512][] : memref<1024xi8> to memref<1x8x4x4xf32>
// CHECK-NEXT: nn.compute ins(%r, %w : {{.*}}) outs(%c : memref<1x8x4x4xf32>)
// CHECK:      %s = memref.view %arena[%c512][] : memref<1024xi8> to memref<1x8x4x4xf32>
// CHECK-NEXT: nn.compute ins(%c : memref<1x8x4x4xf32>) outs(%s : memref<1x8x4x4xf32>)
// CHECK:      %n = memref.alloc() {alignment = 64 : i64} : memref<1x8x4x4xf32>
// CHECK:      func.return %n

// REPORT:      @chain: 3 buffers over 5 steps
// REPORT-NEXT:   arena {{.*}} 1.0 KiB  (greedy-by-size;
// REPORT-NEXT:   lower bound {{.*}} 1.0 KiB  (arena/bound 1.000, peak at step 1)
// REPORT-NEXT:   unplanned {{.*}} 1.5 KiB
// REPORT:        largest buffers live at the peak (2 live, 0.0 KiB of padding and halo):

// -----

// A halo'd buffer is one buffer with its interior view: it lives from layout.fill_border to
// the last read, and its border counts as padding (1x5x8x8 - 1x5x6x6 floats = 560 bytes).
// The relu runs in place on the conv's output, so both write the same halo'd buffer.
func.func @halo(%x: tensor<1x3x6x6xf32>) -> tensor<1x7x6x6xf32> {
  %w1 = nn.constant dense<0.1> : tensor<5x3x3x3xf32>
  %c1 = nn.conv2d %x, %w1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x6x6xf32>, tensor<5x3x3x3xf32>) -> tensor<1x5x6x6xf32>
  %r = nn.relu %c1 : tensor<1x5x6x6xf32>
  %w2 = nn.constant dense<0.1> : tensor<7x5x3x3xf32>
  %c2 = nn.conv2d %r, %w2 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x5x6x6xf32>, tensor<7x5x3x3xf32>) -> tensor<1x7x6x6xf32>
  func.return %c2 : tensor<1x7x6x6xf32>
}
// CHECK-LABEL: func.func @halo
// CHECK-SAME: nnlayout.arena_bytes = 1280 : i64, nnlayout.lower_bound_bytes = 1280 : i64, nnlayout.unplanned_bytes = 1280 : i64, nnlayout.padding_bytes = 560 : i64, nnlayout.halo_bytes = 560 : i64
// CHECK:      %c1 = memref.view %arena[%{{.*}}][] : memref<1280xi8> to memref<1x5x8x8xf32>
// CHECK-NEXT: layout.fill_border %c1
// CHECK-NEXT: %r = memref.subview %c1[0, 0, 1, 1] [1, 5, 6, 6]
// CHECK-NEXT: nn.compute ins(%x, %w1 : {{.*}}) outs(%r : {{.*}})
// CHECK:      nn.compute ins(%r : {{.*}}) outs(%r : {{.*}})
// CHECK-NEXT: ^bb0
// CHECK-NEXT:   nn.relu
// CHECK:      %c2 = memref.alloc()
