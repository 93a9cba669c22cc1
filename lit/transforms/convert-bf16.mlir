// convert-to-bf16: f32 ops whose target kernels compute bf16 become bf16 ops, with nn.cast at
// the boundaries. On `ref` every op converts (the reference kernels are the oracle: f32 math
// rounded once per op); the weights' casts are constant expressions (computed at load).
// RUN: nnlayout-opt %s --split-input-file -p 'convert-to-bf16{target=ref}' | filecheck %s
// RUN: nnlayout-opt %s --split-input-file -p 'default-pipeline{target=ref bf16=true}' | filecheck %s --check-prefix=PLANNED
// RUN: env NNLAYOUT_BF16=1 nnlayout-opt %s --split-input-file -p 'default-pipeline{target=ref}' | filecheck %s --check-prefix=PLANNED

func.func @conv_relu(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = nn.constant dense<0.5> : tensor<4x3x3x3xf32>
  %b = nn.constant dense<0.1> : tensor<4xf32>
  %c = nn.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %r = nn.relu %c : tensor<1x4x8x8xf32>
  func.return %r : tensor<1x4x8x8xf32>
}
// CHECK-LABEL: func.func @conv_relu(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-DAG:   %[[W:.*]] = nn.cast %w : tensor<4x3x3x3xf32> -> tensor<4x3x3x3xbf16>
// CHECK-DAG:   %[[B:.*]] = nn.cast %b : tensor<4xf32> -> tensor<4xbf16>
// CHECK-DAG:   %[[X:.*]] = nn.cast %x : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xbf16>
// CHECK:       %[[C:.*]] = nn.conv2d %[[X]], %[[W]], %[[B]] {{.*}} -> tensor<1x4x8x8xbf16>
// CHECK-NEXT:  %[[R:.*]] = nn.relu %[[C]] : tensor<1x4x8x8xbf16>
// CHECK-NEXT:  %[[Y:.*]] = nn.cast %[[R]] : tensor<1x4x8x8xbf16> -> tensor<1x4x8x8xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<1x4x8x8xf32>
// Planned: the bf16 buffers are 2 bytes an element (the input cast writes into the
// convolution's halo), the weights'
// casts are load-time constants (no nn.compute), the function's signature stays f32.
// PLANNED-LABEL: func.func @conv_relu(%x: memref<1x3x8x8xf32>) -> memref<1x4x8x8xf32>
// PLANNED:       memref.view %arena[{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<1x3x10x10xbf16>
// PLANNED:       nn.cast %{{.*}} {kernel = #nn.kernel<"cast_ref"{{.*}}: tensor<1x3x8x8xf32> -> tensor<1x3x8x8xbf16>
// PLANNED:       memref.view %arena[{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<1x4x8x8xbf16>
// PLANNED:       nn.conv2d {{.*}} {kernel = #nn.kernel<"conv2d_ref"{{.*}} -> tensor<1x4x8x8xbf16>
// PLANNED:       nn.cast %{{.*}} : tensor<1x4x8x8xbf16> -> tensor<1x4x8x8xf32>

// -----

// A value used by two bf16 ops is cast once; an op that moves data (flatten) follows its bf16
// input; a function result that is bf16 inside is cast back.
func.func @shared(%x: tensor<1x4x2x2xf32>) -> (tensor<1x16xf32>, tensor<1x4x2x2xf32>) {
  %a = nn.add %x, %x : (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %m = nn.mul %x, %a : (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %f = nn.flatten %m axis 1 : tensor<1x4x2x2xf32> -> tensor<1x16xf32>
  func.return %f, %a : tensor<1x16xf32>, tensor<1x4x2x2xf32>
}
// CHECK-LABEL: func.func @shared
// CHECK-NEXT:  %[[X:.*]] = nn.cast %x : tensor<1x4x2x2xf32> -> tensor<1x4x2x2xbf16>
// CHECK-NEXT:  %[[A:.*]] = nn.add %[[X]], %[[X]] : {{.*}} -> tensor<1x4x2x2xbf16>
// CHECK-NEXT:  %[[A32:.*]] = nn.cast %[[A]] : tensor<1x4x2x2xbf16> -> tensor<1x4x2x2xf32>
// CHECK-NEXT:  %[[M:.*]] = nn.mul %[[X]], %[[A]] : {{.*}} -> tensor<1x4x2x2xbf16>
// CHECK-NEXT:  %[[F:.*]] = nn.flatten %[[M]] axis 1 : tensor<1x4x2x2xbf16> -> tensor<1x16xbf16>
// CHECK-NEXT:  %[[F32:.*]] = nn.cast %[[F]] : tensor<1x16xbf16> -> tensor<1x16xf32>
// CHECK-NEXT:  func.return %[[F32]], %[[A32]]
// PLANNED-LABEL: func.func @shared

// -----

// Quantized data and ops that are not all f32 are left as they are.
func.func @quantized(%x: tensor<4xui8>) -> tensor<4xui8> {
  %r = nn.reshape %x : tensor<4xui8> -> tensor<4xui8>
  func.return %r : tensor<4xui8>
}
// CHECK-LABEL: func.func @quantized
// CHECK-NOT:   bf16
// PLANNED-LABEL: func.func @quantized

// -----

// Dynamic quantization: the relu becomes bf16, but nn.dynamic_scale (f32 in and out) stays
// f32, and it and the other dynamic ops read the relu's result cast back to f32 (their
// verifiers take f32 inputs only).
func.func @dynamic(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %r = nn.relu %x : tensor<2x8xf32>
  %s = nn.dynamic_scale %r : tensor<2x8xf32> -> tensor<f32>
  %z = nn.dynamic_zero_point %r : tensor<2x8xf32> -> tensor<ui8>
  %q = nn.dynamic_quantize %r, %s, %z : (tensor<2x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x8xui8>
  %y = nn.cast %q : tensor<2x8xui8> -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}
// CHECK-LABEL: func.func @dynamic
// CHECK:       %[[R:.*]] = nn.relu %{{.*}} : tensor<2x8xbf16>
// CHECK-NEXT:  %[[R32:.*]] = nn.cast %[[R]] : tensor<2x8xbf16> -> tensor<2x8xf32>
// CHECK-NEXT:  %[[S:.*]] = nn.dynamic_scale %[[R32]] : tensor<2x8xf32> -> tensor<f32>
// CHECK-NEXT:  %[[Z:.*]] = nn.dynamic_zero_point %[[R32]] : tensor<2x8xf32> -> tensor<ui8>
// CHECK-NEXT:  nn.dynamic_quantize %[[R32]], %[[S]], %[[Z]] : (tensor<2x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x8xui8>
// PLANNED-LABEL: func.func @dynamic
// PLANNED:       nn.dynamic_range {{.*}} : tensor<2x8xf32> -> tensor<2xf32>
// PLANNED:       nn.dynamic_scale {{.*}} : tensor<2xf32> -> tensor<f32>
