// fold-constants on int8 weights: where oneDNN's int8 convolution runs them (VNNI or AMX:
// INT8), the weights constant records the bytes they take in its format, compensation
// included (a source zero point != 0 needs one); plan-memory counts them (the function's
// figures, the report's "constants" line: the loaded program holds them packed alone, their
// plain arrays, the bias prescaled into the kernel's f32 copy too, freed at load, as only the
// bound kernel reads them); the IR prints and parses back; the program gives
// what it gives without the claims; a target whose kernels pack nothing keeps them plain,
// with a remark.
// REQUIRES: onednn
// RUN: nnlayout-opt %s -p 'default-pipeline{target=onednn report=true}' -o %t.mlir 2> %t.report
// RUN: filecheck %s --check-prefixes=CHECK,%onednn_int8 < %t.mlir
// RUN: filecheck %s --check-prefixes=REPORT,REPORT-%onednn_int8 < %t.report
// RUN: nnlayout-opt %t.mlir | filecheck %s --check-prefixes=CHECK,%onednn_int8
// RUN: nnlayout-run %t.mlir --backend generated --random-inputs 3 --output-dir %t.packed > %t.txt
// RUN: sed 's/ {nnlayout.packed = {[^}]*}}//' %t.mlir | nnlayout-run - --random-inputs 3 --output-dir %t.plain >> %t.txt
// RUN: filecheck %s --check-prefix=SAME < %t.txt
// RUN: nnlayout-opt %s --verify-diagnostics -p 'default-pipeline{target=ref}'

// CHECK:         nnlayout.constant_bytes = [[CONSTANTS:[0-9]+]] : i64
// INT8-SAME:     nnlayout.packed_bytes = [[PACKED:[0-9]+]] : i64, nnlayout.packed_plain_bytes = 0 : i64, nnlayout.compensation_bytes = [[COMPENSATION:[1-9][0-9]*]] : i64, nnlayout.released_bytes = 4736 : i64
// NO-INT8-SAME:  nnlayout.packed_bytes = 0 : i64, nnlayout.packed_plain_bytes = 0 : i64, nnlayout.compensation_bytes = 0 : i64, nnlayout.released_bytes = 0 : i64
// INT8:          %w = nn.constant dense<3> : tensor<32x16x3x3xi8> {nnlayout.packed = {kernel = "qconv2d_onednn", bytes = [[PACKED]] : i64, compensation = [[COMPENSATION]] : i64}}
// NO-INT8:       %w = nn.constant dense<3> : tensor<32x16x3x3xi8>{{$}}
// CHECK-NEXT:    %b = nn.constant dense<7> : tensor<32xi32>{{$}}

// REPORT-INT8:     constants {{.*}} KiB  (outside the arena; 1 packed by their kernels: {{[0-9.]+}} KiB, compensation {{[0-9.]+}} KiB; plain arrays freed at load: 4.6 KiB)
// REPORT-NO-INT8:  constants          4.6 KiB  (outside the arena)

// SAME:      result0: [1, 32, 6, 6] uint8 sum={{[0-9]+}} crc32=[[CRC:[0-9a-f]+]]
// SAME-NEXT: result0: [1, 32, 6, 6] uint8 sum={{[0-9]+}} crc32=[[CRC]]

func.func @f(%x: tensor<1x16x6x6xui8>) -> tensor<1x32x6x6xui8> {
  %w = nn.constant dense<3> : tensor<32x16x3x3xi8>
  %b = nn.constant dense<7> : tensor<32xi32>
  // expected-remark @+1 {{weights stay plain: qconv2d_ref keeps no packed format}}
  %y = nn.qconv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {w_scale = dense<0.5> : tensor<32xf32>, w_zero_point = dense<0> : tensor<32xi8>, x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : (tensor<1x16x6x6xui8>, tensor<32x16x3x3xi8>, tensor<32xi32>) -> tensor<1x32x6x6xui8>
  func.return %y : tensor<1x32x6x6xui8>
}
