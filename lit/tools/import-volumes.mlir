// nnlayout-import of 3-D layers (frontends/onnx/volumes.py): a Conv over depth, height and
// width becomes one 2-D convolution per depth tap over the clip's frames as a batch of
// images (zero frames concatenated for the depth padding; the weights a slice of the 3-D
// ones), the taps summed; a MaxPool of one clip a pool over
// its frames' height and width, then the largest of the frames each depth window takes.
// The result runs.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/volumes_onnx.py %t/v.onnx
// RUN: nnlayout-import %t/v.onnx -o %t/v.mlir
// RUN: filecheck %s < %t/v.mlir
// RUN: nnlayout-run %t/v.mlir --random-inputs 0 --output-dir %t/out | filecheck %s --check-prefix=OUT

// CHECK:      %[[T:.*]] = nn.transpose %x perm [0, 2, 1, 3, 4] : tensor<1x3x4x6x6xf32> -> tensor<1x4x3x6x6xf32>
// CHECK-NEXT: %[[F:.*]] = nn.reshape %[[T]] : tensor<1x4x3x6x6xf32> -> tensor<4x3x6x6xf32>
// CHECK-NEXT: %[[Z:.*]] = nn.constant dense<0.000000e+00> : tensor<1x1x1x1xf32>
// CHECK-NEXT: %[[ZF:.*]] = nn.expand %[[Z]] : tensor<1x1x1x1xf32> -> tensor<1x3x6x6xf32>
// CHECK-NEXT: %[[P:.*]] = nn.concat %[[ZF]], %[[F]], %[[ZF]] axis 0 : {{.*}} -> tensor<6x3x6x6xf32>
// CHECK-NEXT: %[[W0:.*]] = nn.slice %w starts [0, 0, 0, 0, 0] sizes [5, 3, 1, 3, 3]
// CHECK-NEXT: %[[K0:.*]] = nn.reshape %[[W0]] : tensor<5x3x1x3x3xf32> -> tensor<5x3x3x3xf32>
// CHECK-NEXT: %[[F0:.*]] = nn.slice %[[P]] starts [0, 0, 0, 0] sizes [4, 3, 6, 6]
// CHECK-NEXT: %[[C0:.*]] = nn.conv2d %[[F0]], %[[K0]] strides [1, 1] pads [1, 1, 1, 1] {{.*}} -> tensor<4x5x6x6xf32>
// CHECK:      nn.slice %[[P]] starts [1, 0, 0, 0]
// CHECK:      %[[C1:.*]] = nn.conv2d
// CHECK-NEXT: %[[A1:.*]] = nn.add %[[C0]], %[[C1]]
// CHECK:      nn.slice %[[P]] starts [2, 0, 0, 0]
// CHECK:      %[[C2:.*]] = nn.conv2d %{{.*}}, %{{.*}}, %b
// CHECK-NEXT: %[[A2:.*]] = nn.add %[[A1]], %[[C2]]
// CHECK-NEXT: %[[R:.*]] = nn.reshape %[[A2]] : tensor<4x5x6x6xf32> -> tensor<1x4x5x6x6xf32>
// CHECK-NEXT: %conv = nn.transpose %[[R]] perm [0, 2, 1, 3, 4] : tensor<1x4x5x6x6xf32> -> tensor<1x5x4x6x6xf32>
// CHECK-NEXT: %[[BACK:.*]] = nn.transpose %conv perm [0, 2, 1, 3, 4]
// CHECK-NEXT: %[[FR:.*]] = nn.reshape %[[BACK]] : tensor<1x4x5x6x6xf32> -> tensor<4x5x6x6xf32>
// CHECK-NEXT: %[[HW:.*]] = nn.max_pool2d %[[FR]] kernel [2, 2] strides [2, 2] {{.*}} -> tensor<4x5x3x3xf32>
// CHECK-NEXT: %[[E:.*]] = nn.slice %[[HW]] starts [0, 0, 0, 0] sizes [2, 5, 3, 3] steps [2, 1, 1, 1]
// CHECK-NEXT: %[[O:.*]] = nn.slice %[[HW]] starts [1, 0, 0, 0] sizes [2, 5, 3, 3] steps [2, 1, 1, 1]
// CHECK-NEXT: %[[M:.*]] = nn.max %[[E]], %[[O]]
// CHECK-NEXT: %[[R2:.*]] = nn.reshape %[[M]] : tensor<2x5x3x3xf32> -> tensor<1x2x5x3x3xf32>
// CHECK-NEXT: %pool = nn.transpose %[[R2]] perm [0, 2, 1, 3, 4] : tensor<1x2x5x3x3xf32> -> tensor<1x5x2x3x3xf32>

// OUT: result0: [1, 5, 2, 3, 3] float32
