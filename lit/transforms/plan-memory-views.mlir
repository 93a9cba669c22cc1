// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=ref},bufferize,plan-memory,verify-memory-plan' | filecheck %s

// A view (lowering/views.py) is its operand's buffer: the buffer of %r lives until %y, which
// reads it through %f. So neg, whose kernel may write over its input (neg_ref: in_place = 0),
// gets a buffer of its own: written over %r, it would change what %f reads. Without the view
// (copying flatten) %r would die at neg.
func.func @alias(%x: tensor<1x4x4x2xf32>) -> tensor<1x32xf32> {
  %r = nn.relu %x : tensor<1x4x4x2xf32>
  %f = nn.flatten %r axis 1 : tensor<1x4x4x2xf32> -> tensor<1x32xf32>
  %n = nn.neg %r : tensor<1x4x4x2xf32>
  %m = nn.flatten %n axis 1 : tensor<1x4x4x2xf32> -> tensor<1x32xf32>
  %y = nn.add %m, %f : (tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<1x32xf32>
  func.return %y : tensor<1x32xf32>
}
// CHECK-LABEL: func.func @alias
// CHECK-SAME:  nnlayout.arena_bytes = 256 : i64, nnlayout.lower_bound_bytes = 256 : i64, nnlayout.unplanned_bytes = 256 : i64
// CHECK:       %c0 = arith.constant 0 : index
// CHECK-NEXT:  %c128 = arith.constant 128 : index
// CHECK:       %r = memref.view %arena[%c0][] : memref<256xi8> to memref<1x4x4x2xf32>
// CHECK:       %f = memref.reinterpret_cast %r
// CHECK:       %n = memref.view %arena[%c128][] : memref<256xi8> to memref<1x4x4x2xf32>
// CHECK-NEXT:  nn.compute ins(%r : memref<1x4x4x2xf32>) outs(%n : memref<1x4x4x2xf32>)
// CHECK:       %m = memref.reinterpret_cast %n
// CHECK:       %y = memref.alloc()
// CHECK-NEXT:  nn.compute ins(%m, %f : memref<1x32xf32>, memref<1x32xf32>) outs(%y : memref<1x32xf32>)

// -----

// When the view's last reader is the in-place op itself, the buffer dies there: neg still
// may not write over %r, since it reads %r through another operand (the view %f).
func.func @same_op(%x: tensor<1x32xf32>) -> tensor<1x32xf32> {
  %r = nn.relu %x : tensor<1x32xf32>
  %v = nn.reshape %r : tensor<1x32xf32> -> tensor<1x32xf32>
  %s = nn.add %r, %v : (tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<1x32xf32>
  %y = nn.neg %s : tensor<1x32xf32>
  func.return %y : tensor<1x32xf32>
}
// CHECK-LABEL: func.func @same_op
// CHECK-SAME:  nnlayout.arena_bytes = 256 : i64, nnlayout.lower_bound_bytes = 256 : i64
// CHECK:       %v = memref.reinterpret_cast %r
// CHECK:       %s = memref.view %arena[%c128][]
// CHECK-NEXT:  nn.compute ins(%r, %v : memref<1x32xf32>, memref<1x32xf32>) outs(%s : memref<1x32xf32>)
