// nnlayout-import of a 3-D transposed convolution (frontends/onnx/volumes.py): a 3-D UNet's
// upsampling (kernel 2, stride 2) becomes one 2-D transposed convolution per depth tap over
// the clip's frames as a batch of images; tap t's frames land on output frames 2 i + t, so
// the two interleave (a concat along a new axis after the frames, then a reshape), and the
// bias is added last. The result runs.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/transposed_volumes_onnx.py %t/v.onnx
// RUN: nnlayout-import %t/v.onnx -o %t/v.mlir
// RUN: filecheck %s < %t/v.mlir
// RUN: nnlayout-run %t/v.mlir --random-inputs 0 --output-dir %t/out | filecheck %s --check-prefix=OUT

// CHECK:      %[[T:.*]] = nn.transpose %x perm [0, 2, 1, 3, 4] : tensor<1x4x3x5x5xf32> -> tensor<1x3x4x5x5xf32>
// CHECK-NEXT: %[[F:.*]] = nn.reshape %[[T]] : tensor<1x3x4x5x5xf32> -> tensor<3x4x5x5xf32>
// CHECK-NEXT: %[[W0:.*]] = nn.slice %w starts [0, 0, 0, 0, 0] sizes [4, 3, 1, 2, 2]
// CHECK-NEXT: %[[K0:.*]] = nn.reshape %[[W0]] : tensor<4x3x1x2x2xf32> -> tensor<4x3x2x2xf32>
// CHECK-NEXT: %[[C0:.*]] = nn.conv_transpose2d %[[F]], %[[K0]] strides [2, 2] pads [0, 0, 0, 0] {{.*}} -> tensor<3x3x10x10xf32>
// CHECK-NEXT: %[[W1:.*]] = nn.slice %w starts [0, 0, 1, 0, 0] sizes [4, 3, 1, 2, 2]
// CHECK-NEXT: %[[K1:.*]] = nn.reshape %[[W1]]
// CHECK-NEXT: %[[C1:.*]] = nn.conv_transpose2d %[[F]], %[[K1]] {{.*}} -> tensor<3x3x10x10xf32>
// CHECK-NEXT: %[[R0:.*]] = nn.reshape %[[C0]] : tensor<3x3x10x10xf32> -> tensor<3x1x3x10x10xf32>
// CHECK-NEXT: %[[R1:.*]] = nn.reshape %[[C1]] : tensor<3x3x10x10xf32> -> tensor<3x1x3x10x10xf32>
// CHECK-NEXT: %[[I:.*]] = nn.concat %[[R0]], %[[R1]] axis 1 : {{.*}} -> tensor<3x2x3x10x10xf32>
// CHECK-NEXT: %[[M:.*]] = nn.reshape %[[I]] : tensor<3x2x3x10x10xf32> -> tensor<6x3x10x10xf32>
// CHECK-NEXT: %[[B:.*]] = nn.reshape %b : tensor<3xf32> -> tensor<3x1x1xf32>
// CHECK-NEXT: %[[A:.*]] = nn.add %[[M]], %[[B]] : (tensor<6x3x10x10xf32>, tensor<3x1x1xf32>) -> tensor<6x3x10x10xf32>
// CHECK-NEXT: %[[BACK:.*]] = nn.reshape %[[A]] : tensor<6x3x10x10xf32> -> tensor<1x6x3x10x10xf32>
// CHECK-NEXT: %up = nn.transpose %[[BACK]] perm [0, 2, 1, 3, 4] : tensor<1x6x3x10x10xf32> -> tensor<1x3x6x10x10xf32>

// OUT: result0: [1, 3, 6, 10, 10] float32
