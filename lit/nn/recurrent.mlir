// Round trip of nn.lstm, nn.gru and nn.rnn, in the pretty and the generic form.
// RUN: nnlayout-opt %s | nnlayout-opt | filecheck %s
// RUN: nnlayout-opt %s --print-op-generic > %t
// RUN: filecheck %s --check-prefix=GENERIC < %t
// RUN: nnlayout-opt %t | filecheck %s

func.func @layers(%x: tensor<6x2x4xf32>, %w: tensor<2x20x4xf32>, %r: tensor<2x20x5xf32>, %b: tensor<2x40xf32>, %h: tensor<2x2x5xf32>, %gw: tensor<1x15x4xf32>, %gr: tensor<1x15x5xf32>, %gb: tensor<1x30xf32>, %gh: tensor<1x2x5xf32>, %rw: tensor<1x5x4xf32>, %rr: tensor<1x5x5xf32>, %rb: tensor<1x10xf32>) -> (tensor<6x2x2x5xf32>, tensor<2x2x5xf32>, tensor<6x2x1x5xf32>, tensor<6x2x1x5xf32>) {
  %0 = nn.lstm %x, %w, %r, %b, %h, %h direction "bidirectional" : (tensor<6x2x4xf32>, tensor<2x20x4xf32>, tensor<2x20x5xf32>, tensor<2x40xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>) -> tensor<6x2x2x5xf32>
  %1 = nn.lstm %x, %w, %r, %b, %h, %h direction "bidirectional" clip 2.5 last_cell : (tensor<6x2x4xf32>, tensor<2x20x4xf32>, tensor<2x20x5xf32>, tensor<2x40xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>) -> tensor<2x2x5xf32>
  %2 = nn.gru %x, %gw, %gr, %gb, %gh direction "reverse" linear_before_reset : (tensor<6x2x4xf32>, tensor<1x15x4xf32>, tensor<1x15x5xf32>, tensor<1x30xf32>, tensor<1x2x5xf32>) -> tensor<6x2x1x5xf32>
  %3 = nn.rnn %x, %rw, %rr, %rb, %gh direction "forward" activation "relu" : (tensor<6x2x4xf32>, tensor<1x5x4xf32>, tensor<1x5x5xf32>, tensor<1x10xf32>, tensor<1x2x5xf32>) -> tensor<6x2x1x5xf32>
  func.return %0, %1, %2, %3 : tensor<6x2x2x5xf32>, tensor<2x2x5xf32>, tensor<6x2x1x5xf32>, tensor<6x2x1x5xf32>
}
// CHECK-LABEL: func.func @layers
// CHECK:      %0 = nn.lstm %x, %w, %r, %b, %h, %h direction "bidirectional" : (tensor<6x2x4xf32>, tensor<2x20x4xf32>, tensor<2x20x5xf32>, tensor<2x40xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>) -> tensor<6x2x2x5xf32>
// CHECK-NEXT: %1 = nn.lstm %x, %w, %r, %b, %h, %h direction "bidirectional" clip 2.500000e+00 last_cell : ({{.*}}) -> tensor<2x2x5xf32>
// CHECK-NEXT: %2 = nn.gru %x, %gw, %gr, %gb, %gh direction "reverse" linear_before_reset : ({{.*}}) -> tensor<6x2x1x5xf32>
// CHECK-NEXT: %3 = nn.rnn %x, %rw, %rr, %rb, %gh direction "forward" activation "relu" : ({{.*}}) -> tensor<6x2x1x5xf32>
// GENERIC: "nn.lstm"(%{{.*}}) <{direction = "bidirectional"}>
// GENERIC: "nn.lstm"(%{{.*}}) <{direction = "bidirectional", clip = 2.500000e+00 : f32, last_cell}>
// GENERIC: "nn.gru"(%{{.*}}) <{direction = "reverse", linear_before_reset}>
// GENERIC: "nn.rnn"(%{{.*}}) <{direction = "forward", activation = "relu"}>
