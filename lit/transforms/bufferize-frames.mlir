// RUN: nnlayout-opt %s -p 'default-pipeline{target=avx512}' | filecheck %s

// A 3-D convolution's frames (frontends/onnx/volumes.py) in nChw16c: the convolution writes
// its frames straight into their slot of the concat of images between zero frames (one
// dense run, N outermost), the zero frames are copied, and each depth tap's slice of whole
// images is a view of the concat's buffer (lowering/views.py): no nn.concat, no nn.slice.
func.func @frames(%x: tensor<4x5x6x6xf32>, %w: tensor<5x5x3x3xf32>) -> tensor<4x5x6x6xf32> {
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<4x5x6x6xf32>, tensor<5x5x3x3xf32>) -> tensor<4x5x6x6xf32>
  %z = nn.constant dense<0.000000e+00> : tensor<1x1x1x1xf32>
  %e = nn.expand %z : tensor<1x1x1x1xf32> -> tensor<1x5x6x6xf32>
  %p = nn.concat %e, %c, %e axis 0 : (tensor<1x5x6x6xf32>, tensor<4x5x6x6xf32>, tensor<1x5x6x6xf32>) -> tensor<6x5x6x6xf32>
  %s0 = nn.slice %p starts [0, 0, 0, 0] sizes [4, 5, 6, 6] steps [1, 1, 1, 1] : tensor<6x5x6x6xf32> -> tensor<4x5x6x6xf32>
  %s2 = nn.slice %p starts [2, 0, 0, 0] sizes [4, 5, 6, 6] steps [1, 1, 1, 1] : tensor<6x5x6x6xf32> -> tensor<4x5x6x6xf32>
  %c0 = nn.conv2d %s0, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<4x5x6x6xf32>, tensor<5x5x3x3xf32>) -> tensor<4x5x6x6xf32>
  %c2 = nn.conv2d %s2, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<4x5x6x6xf32>, tensor<5x5x3x3xf32>) -> tensor<4x5x6x6xf32>
  %y = nn.add %c0, %c2 : (tensor<4x5x6x6xf32>, tensor<4x5x6x6xf32>) -> tensor<4x5x6x6xf32>
  func.return %y : tensor<4x5x6x6xf32>
}
// CHECK-LABEL: func.func @frames
// CHECK-SAME:    nnlayout.concat_copy_bytes_avoided = 9216
// CHECK:         %c = memref.subview %p[1, 0, 0, 0, 0] [4, 1, 6, 6, 16] [1, 1, 1, 1, 1] : memref<6x1x6x6x16xf32> to memref<4x1x6x6x16xf32, strided<[576, 576, 96, 16, 1], offset: 576>>
// CHECK:         %[[FIRST:.*]] = memref.subview %p[0, 0, 0, 0, 0] [1, 1, 6, 6, 16]
// CHECK:         "memref.copy"(%{{.*}}, %[[FIRST]])
// CHECK:         %[[LAST:.*]] = memref.subview %p[5, 0, 0, 0, 0] [1, 1, 6, 6, 16]
// CHECK:         "memref.copy"(%{{.*}}, %[[LAST]])
// CHECK:         %s0 = memref.subview %p[0, 0, 0, 0, 0] [4, 1, 6, 6, 16] [1, 1, 1, 1, 1] : memref<6x1x6x6x16xf32> to memref<4x1x6x6x16xf32, strided<[576, 576, 96, 16, 1]>>
// CHECK-NEXT:    %s2 = memref.subview %p[2, 0, 0, 0, 0] [4, 1, 6, 6, 16] [1, 1, 1, 1, 1] : memref<6x1x6x6x16xf32> to memref<4x1x6x6x16xf32, strided<[576, 576, 96, 16, 1], offset: 1152>>
// CHECK-NOT:     nn.concat
// CHECK-NOT:     nn.slice
