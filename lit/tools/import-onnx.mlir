// nnlayout-import on a generated model (no .onnx file is committed): IR beside its weights,
// parsed back by nnlayout-opt, run by nnlayout-run; a missing file is one clean error; a
// weights file not of this import (changed after it) is refused naming both files.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -m nnlayout.examples.make_models --small unet -o %t
// RUN: nnlayout-import %t/unet_small.onnx -o %t/unet.mlir
// RUN: filecheck %s < %t/unet.mlir
// RUN: nnlayout-opt %t/unet.mlir | filecheck %s
// RUN: nnlayout-run %t/unet.mlir --random-inputs 0 --output-dir %t/out | filecheck %s --check-prefix=OUT
// RUN: not nnlayout-import %t/missing.onnx 2>&1 | filecheck %s --check-prefix=ERR
// RUN: %python -c "open('%t/unet.npz', 'ab').write(b'x')"
// RUN: not nnlayout-run %t/unet.mlir --random-inputs 0 --output-dir %t/out2 2>&1 | filecheck %s --check-prefix=PAIR

// The SHA-256 of the weights file's bytes pairs the two files (docs/robustness-files.md).
// CHECK:      builtin.module attributes {nn.weights = "unet.npz", nn.weights_sha256 = "{{[0-9a-f]+}}"}
// CHECK-NEXT:   func.func @main(%image: tensor<1x3x32x32xf32>) -> tensor<1x2x32x32xf32>
// CHECK-NEXT:     %_down0_a_conv.weight = nn.constant external "_down0_a_conv.weight" {onnx.name = "/down0/a/conv.weight"} : tensor<4x3x3x3xf32>
// CHECK-NEXT:     %_down0_a_conv_Conv_output = nn.conv2d %image, %_down0_a_conv.weight strides [1, 1] pads [1, 1, 1, 1]
// CHECK:          nn.conv_transpose2d {{.*}} strides [2, 2] pads [0, 0, 0, 0] output_padding [0, 0]
// CHECK:          nn.concat {{.*}} axis 1
// CHECK:          func.return %_head_Conv_output : tensor<1x2x32x32xf32>

// OUT: result0: [1, 2, 32, 32] float32

// ERR: error: cannot read '{{.*}}missing.onnx'

// PAIR: error: '{{.*}}unet.mlir' and its weights file '{{.*}}unet.npz' are not a pair
