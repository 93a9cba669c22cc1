// Verifier messages of nn.lstm, nn.gru and nn.rnn.
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics

func.func @direction(%x: tensor<6x2x4xf32>, %w: tensor<1x5x4xf32>, %r: tensor<1x5x5xf32>, %b: tensor<1x10xf32>, %h: tensor<1x2x5xf32>) {
  // expected-error @+1 {{nn.rnn: direction 'sideways' is not one of ['forward', 'reverse', 'bidirectional']}}
  %0 = nn.rnn %x, %w, %r, %b, %h direction "sideways" activation "tanh" : (tensor<6x2x4xf32>, tensor<1x5x4xf32>, tensor<1x5x5xf32>, tensor<1x10xf32>, tensor<1x2x5xf32>) -> tensor<6x2x1x5xf32>
  func.return
}

// -----

func.func @activation(%x: tensor<6x2x4xf32>, %w: tensor<1x5x4xf32>, %r: tensor<1x5x5xf32>, %b: tensor<1x10xf32>, %h: tensor<1x2x5xf32>) {
  // expected-error @+1 {{nn.rnn: activation 'sigmoid' is not one of ['tanh', 'relu']}}
  %0 = nn.rnn %x, %w, %r, %b, %h direction "forward" activation "sigmoid" : (tensor<6x2x4xf32>, tensor<1x5x4xf32>, tensor<1x5x5xf32>, tensor<1x10xf32>, tensor<1x2x5xf32>) -> tensor<6x2x1x5xf32>
  func.return
}

// -----

func.func @gates(%x: tensor<6x2x4xf32>, %w: tensor<1x15x4xf32>, %r: tensor<1x15x5xf32>, %b: tensor<1x30xf32>, %h: tensor<1x2x5xf32>) {
  // expected-error @+1 {{nn.lstm: w must be [1, 20, 4] (4 gates of hidden size 5, 1 direction(s), input 4), got [1, 15, 4]}}
  %0 = nn.lstm %x, %w, %r, %b, %h, %h direction "forward" : (tensor<6x2x4xf32>, tensor<1x15x4xf32>, tensor<1x15x5xf32>, tensor<1x30xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>) -> tensor<6x2x1x5xf32>
  func.return
}

// -----

func.func @directions(%x: tensor<6x2x4xf32>, %w: tensor<1x15x4xf32>, %r: tensor<1x15x5xf32>, %b: tensor<1x30xf32>, %h: tensor<1x2x5xf32>) {
  // expected-error @+1 {{nn.gru: w must be [2, 15, 4] (3 gates of hidden size 5, 2 direction(s), input 4), got [1, 15, 4]}}
  %0 = nn.gru %x, %w, %r, %b, %h direction "bidirectional" : (tensor<6x2x4xf32>, tensor<1x15x4xf32>, tensor<1x15x5xf32>, tensor<1x30xf32>, tensor<1x2x5xf32>) -> tensor<6x2x2x5xf32>
  func.return
}

// -----

func.func @state(%x: tensor<6x2x4xf32>, %w: tensor<1x15x4xf32>, %r: tensor<1x15x5xf32>, %b: tensor<1x30xf32>, %h: tensor<1x3x5xf32>) {
  // expected-error @+1 {{nn.gru: initial state 0 must be [1, 2, 5] ([directions, batch, hidden]), got [1, 3, 5]}}
  %0 = nn.gru %x, %w, %r, %b, %h direction "forward" : (tensor<6x2x4xf32>, tensor<1x15x4xf32>, tensor<1x15x5xf32>, tensor<1x30xf32>, tensor<1x3x5xf32>) -> tensor<6x2x1x5xf32>
  func.return
}

// -----

func.func @clip(%x: tensor<6x2x4xf32>, %w: tensor<1x5x4xf32>, %r: tensor<1x5x5xf32>, %b: tensor<1x10xf32>, %h: tensor<1x2x5xf32>) {
  // expected-error @+1 {{nn.rnn: clip must be positive, got 0.0}}
  %0 = nn.rnn %x, %w, %r, %b, %h direction "forward" clip 0.0 activation "tanh" : (tensor<6x2x4xf32>, tensor<1x5x4xf32>, tensor<1x5x5xf32>, tensor<1x10xf32>, tensor<1x2x5xf32>) -> tensor<6x2x1x5xf32>
  func.return
}

// -----

func.func @result(%x: tensor<6x2x4xf32>, %w: tensor<1x20x4xf32>, %r: tensor<1x20x5xf32>, %b: tensor<1x40xf32>, %h: tensor<1x2x5xf32>) {
  // expected-error @+1 {{nn.lstm: result shape [6, 2, 1, 5] does not match the inferred shape [1, 2, 5]}}
  %0 = nn.lstm %x, %w, %r, %b, %h, %h direction "forward" last_cell : (tensor<6x2x4xf32>, tensor<1x20x4xf32>, tensor<1x20x5xf32>, tensor<1x40xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>) -> tensor<6x2x1x5xf32>
  func.return
}

// -----

func.func @types(%x: tensor<6x2x4xf16>, %w: tensor<1x5x4xf32>, %r: tensor<1x5x5xf32>, %b: tensor<1x10xf32>, %h: tensor<1x2x5xf32>) {
  // expected-error @+1 {{nn.rnn: operand 1 has element type f32, expected f16 like operand 0}}
  %0 = nn.rnn %x, %w, %r, %b, %h direction "forward" activation "tanh" : (tensor<6x2x4xf16>, tensor<1x5x4xf32>, tensor<1x5x5xf32>, tensor<1x10xf32>, tensor<1x2x5xf32>) -> tensor<6x2x1x5xf32>
  func.return
}
