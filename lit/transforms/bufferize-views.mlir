// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=ref}' | filecheck %s --check-prefix=BEFORE
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=ref},bufferize' | filecheck %s
// RUN: nnlayout-opt %s --split-input-file -p 'select-dispatch{target=ref},bufferize' --print-op-generic | nnlayout-opt --split-input-file | filecheck %s

// Reshapes, flattens and slices whose window is one row-major run of plain data become views
// of their operand's buffer (lowering/views.py): a flatten and a reshape are a
// memref.reinterpret_cast (the operand's offset, row-major strides), a slice is a
// memref.subview; no nn.compute, no copy. A view of a view keeps the offset it names.
func.func @views(%x: tensor<1x4x3x2xf32>) -> tensor<1x12xf32> {
  %r = nn.relu %x : tensor<1x4x3x2xf32>
  %f = nn.flatten %r axis 1 : tensor<1x4x3x2xf32> -> tensor<1x24xf32>
  %h = nn.slice %r starts [0, 2, 0, 0] sizes [1, 2, 3, 2] steps [1, 1, 1, 1] : tensor<1x4x3x2xf32> -> tensor<1x2x3x2xf32>
  %g = nn.reshape %h : tensor<1x2x3x2xf32> -> tensor<1x12xf32>
  %a = nn.slice %f starts [0, 0] sizes [1, 12] steps [1, 1] : tensor<1x24xf32> -> tensor<1x12xf32>
  %s = nn.add %a, %g : (tensor<1x12xf32>, tensor<1x12xf32>) -> tensor<1x12xf32>
  func.return %s : tensor<1x12xf32>
}
// BEFORE-LABEL: func.func @views
// BEFORE:       nn.flatten %r axis 1 {kernel = #nn.kernel<"flatten_ref"
// BEFORE:       nn.slice %r starts [0, 2, 0, 0]
// BEFORE:       nn.reshape %h {kernel = #nn.kernel<"reshape_ref"
// BEFORE:       nn.slice %f starts [0, 0]

// CHECK-LABEL: func.func @views
// CHECK-SAME:  nnlayout.view_copy_bytes_avoided = 240 : i64
// CHECK:       %r = memref.alloc() {alignment = 64 : i64} : memref<1x4x3x2xf32>
// CHECK:       %f = memref.reinterpret_cast %r to offset: [0], sizes: [1, 24], strides: [24, 1] : memref<1x4x3x2xf32> to memref<1x24xf32>
// CHECK-NEXT:  %h = memref.subview %r[0, 2, 0, 0] [1, 2, 3, 2] [1, 1, 1, 1] : memref<1x4x3x2xf32> to memref<1x2x3x2xf32, strided<[24, 6, 2, 1], offset: 12>>
// CHECK-NEXT:  %g = memref.reinterpret_cast %h to offset: [12], sizes: [1, 12], strides: [12, 1] : memref<1x2x3x2xf32, strided<[24, 6, 2, 1], offset: 12>> to memref<1x12xf32, strided<[12, 1], offset: 12>>
// CHECK-NEXT:  %a = memref.subview %f[0, 0] [1, 12] [1, 1] : memref<1x24xf32> to memref<1x12xf32, strided<[24, 1]>>
// CHECK-NEXT:  %s = memref.alloc()
// CHECK-NEXT:  nn.compute ins(%a, %g : memref<1x12xf32, strided<[24, 1]>>, memref<1x12xf32, strided<[12, 1], offset: 12>>) outs(%s : memref<1x12xf32>)
// CHECK-NOT:   nn.flatten
// CHECK-NOT:   nn.reshape
// CHECK-NOT:   nn.slice
// CHECK:       func.return %s

// -----

// What stays a kernel call: a slice whose window is strided (every other column), a reshape
// whose result is returned (the caller gets a buffer of its own), and a reshape of a value
// read with a halo (its buffer is the halo's interior, not one run). A function argument is
// viewed like any buffer.
func.func @kept(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x2xf32>, tensor<1x32xf32>, tensor<2x16xf32>, tensor<1x2x4x4xf32>) {
  %w = nn.constant dense<0.1> : tensor<2x2x3x3xf32>
  %s = nn.slice %x starts [0, 0, 0, 0] sizes [1, 2, 4, 2] steps [1, 1, 1, 2] : tensor<1x2x4x4xf32> -> tensor<1x2x4x2xf32>
  %f = nn.flatten %x axis 1 : tensor<1x2x4x4xf32> -> tensor<1x32xf32>
  %r = nn.relu %x : tensor<1x2x4x4xf32>
  %g = nn.reshape %r : tensor<1x2x4x4xf32> -> tensor<2x16xf32>
  %c = nn.conv2d %r, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  %t = nn.reshape %f : tensor<1x32xf32> -> tensor<2x16xf32>
  %u = nn.add %g, %t : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  func.return %s, %f, %u, %c : tensor<1x2x4x2xf32>, tensor<1x32xf32>, tensor<2x16xf32>, tensor<1x2x4x4xf32>
}
// CHECK-LABEL: func.func @kept
// CHECK:       nn.compute ins(%x : memref<1x2x4x4xf32>) outs(%s : memref<1x2x4x2xf32>)
// CHECK:       nn.slice
// CHECK:       nn.compute ins(%x : memref<1x2x4x4xf32>) outs(%f : memref<1x32xf32>)
// CHECK:       nn.flatten
// CHECK:       layout.fill_border
// CHECK:       nn.compute ins(%r{{.*}} : memref<1x2x4x4xf32, strided<[72, 36, 6, 1], offset: 7>>) outs(%g : memref<2x16xf32>)
// CHECK:       nn.reshape
// CHECK:       %t = memref.reinterpret_cast %f to offset: [0], sizes: [2, 16], strides: [16, 1] : memref<1x32xf32> to memref<2x16xf32>

// -----

// A view gets no halo: the relu reading the view %v writes the halo'd buffer of %r itself,
// rather than running in place over %v's bytes (the in-place chain stops at a view).
func.func @halo_after_view(%x: tensor<1x2x16xf32>) -> tensor<1x2x4x4xf32> {
  %w = nn.constant dense<0.1> : tensor<2x2x3x3xf32>
  %t = nn.relu %x : tensor<1x2x16xf32>
  %v = nn.reshape %t : tensor<1x2x16xf32> -> tensor<1x2x4x4xf32>
  %r = nn.relu %v : tensor<1x2x4x4xf32>
  %c = nn.conv2d %r, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  func.return %c : tensor<1x2x4x4xf32>
}
// CHECK-LABEL: func.func @halo_after_view
// CHECK:       %t = memref.alloc() {alignment = 64 : i64} : memref<1x2x16xf32>
// CHECK:       %v = memref.reinterpret_cast %t to offset: [0], sizes: [1, 2, 4, 4], strides: [32, 16, 4, 1] : memref<1x2x16xf32> to memref<1x2x4x4xf32>
// CHECK-NEXT:  %r = memref.alloc() {alignment = 64 : i64} : memref<1x2x6x6xf32>
// CHECK-NEXT:  layout.fill_border %r
// CHECK-NEXT:  %[[I:.*]] = memref.subview %r[0, 0, 1, 1] [1, 2, 4, 4]
// CHECK-NEXT:  nn.compute ins(%v : memref<1x2x4x4xf32>) outs(%[[I]] : {{.*}})
