// nnlayout-import of a recurrent layer (frontends/onnx/recurrent.py): a bidirectional LSTM
// with every output read becomes one nn.lstm over the whole sequence (zero initial states),
// ONNX's Y its transpose, Y_h the last step of each direction (the first, for the reverse
// one) concatenated, and Y_c a second nn.lstm that returns the last cell state. On the onednn
// target oneDNN's RNN primitive runs each (its scratchpad the workspace; the cell state's
// also holds the hidden states the primitive writes); elsewhere the reference kernel. The
// result runs.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/recurrent_onnx.py %t/r.onnx
// RUN: nnlayout-import %t/r.onnx -o %t/r.mlir
// RUN: filecheck %s < %t/r.mlir
// RUN: nnlayout-opt %t/r.mlir -p 'default-pipeline{target=onednn}' | filecheck %s --check-prefix=ONEDNN
// RUN: nnlayout-opt %t/r.mlir -p 'default-pipeline{target=avx2}' | filecheck %s --check-prefix=AVX2
// RUN: nnlayout-run %t/r.mlir --random-inputs 0 --output-dir %t/out | filecheck %s --check-prefix=OUT

// CHECK:      %[[H0:.*]] = nn.constant external "y.h0" : tensor<2x2x5xf32>
// CHECK-NEXT: %[[C0:.*]] = nn.constant external "y.c0" : tensor<2x2x5xf32>
// CHECK-NEXT: %[[ALL:.*]] = nn.lstm %x, %w, %r, %b, %[[H0]], %[[C0]] direction "bidirectional" : ({{.*}}) -> tensor<6x2x2x5xf32>
// CHECK-NEXT: %[[Y:.*]] = nn.transpose %[[ALL]] perm [0, 2, 1, 3] : tensor<6x2x2x5xf32> -> tensor<6x2x2x5xf32>
// CHECK-NEXT: %[[F:.*]] = nn.slice %[[ALL]] starts [5, 0, 0, 0] sizes [1, 2, 1, 5]
// CHECK-NEXT: %[[FH:.*]] = nn.reshape %[[F]] : tensor<1x2x1x5xf32> -> tensor<1x2x5xf32>
// CHECK-NEXT: %[[R:.*]] = nn.slice %[[ALL]] starts [0, 0, 1, 0] sizes [1, 2, 1, 5]
// CHECK-NEXT: %[[RH:.*]] = nn.reshape %[[R]] : tensor<1x2x1x5xf32> -> tensor<1x2x5xf32>
// CHECK-NEXT: %[[H:.*]] = nn.concat %[[FH]], %[[RH]] axis 0
// CHECK-NEXT: %[[C:.*]] = nn.lstm %x, %w, %r, %b, %[[H0]], %[[C0]] direction "bidirectional" last_cell : ({{.*}}) -> tensor<2x2x5xf32>
// CHECK-NEXT: func.return %[[Y]], %[[H]], %[[C]]

// ONEDNN: nn.lstm {{.*}} {kernel = #nn.kernel<"lstm_onednn", operands = ["", "", "", "", "", ""], results = [""], workspace = {{[1-9][0-9]*}}>}
// ONEDNN: nn.lstm {{.*}} last_cell {kernel = #nn.kernel<"lstm_onednn", operands = ["", "", "", "", "", ""], results = [""], workspace = {{[1-9][0-9]*}}>}
// AVX2: nn.lstm {{.*}} {kernel = #nn.kernel<"lstm_ref", operands = ["", "", "", "", "", ""], results = [""]>}

// OUT: result0: [6, 2, 2, 5] float32
// OUT: result1: [2, 2, 5] float32
// OUT: result2: [2, 2, 5] float32
