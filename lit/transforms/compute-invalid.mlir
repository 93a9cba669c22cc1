// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics

func.func @wrong_buffer_shape(%x: memref<1x3x8x8xf32>, %y: memref<1x3x8x9xf32>) {
  // expected-error @+1 {{nn.compute: outs 0 has type memref<1x3x8x9xf32>, but tensor<1x3x8x8xf32> is stored as memref<1x3x8x8xf32>}}
  nn.compute ins(%x : memref<1x3x8x8xf32>) outs(%y : memref<1x3x8x9xf32>) {
  ^bb0(%a: tensor<1x3x8x8xf32>):
    %r = nn.relu %a : tensor<1x3x8x8xf32>
    nn.yield %r : tensor<1x3x8x8xf32>
  }
  func.return
}

// -----

func.func @blocked_buffer_must_be_physical(%x: memref<1x3x8x8xf32>, %y: memref<1x3x8x8xf32>) {
  // expected-error @+1 {{is stored as memref<1x1x8x8x8xf32>}}
  nn.compute ins(%x : memref<1x3x8x8xf32>) outs(%y : memref<1x3x8x8xf32>) {
  ^bb0(%a: tensor<1x3x8x8xf32>):
    %r = layout.reorder %a : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32, #layout.layout<"NCHW8c">>
    nn.yield %r : tensor<1x3x8x8xf32, #layout.layout<"NCHW8c">>
  }
  func.return
}

// -----

func.func @halo_grows_the_input(%x: memref<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>, %y: memref<1x4x8x8xf32>) {
  // expected-error @+1 {{nn.compute: ins 0 has type memref<1x4x8x8xf32>, but tensor<1x4x8x8xf32> with halo [1, 1, 1, 1] is stored as memref<1x4x10x10xf32>}}
  nn.compute ins(%x, %w : memref<1x4x8x8xf32>, tensor<4x4x3x3xf32>) outs(%y : memref<1x4x8x8xf32>) halo [1, 1, 1, 1] {
  ^bb0(%a: tensor<1x4x8x8xf32>, %b: tensor<4x4x3x3xf32>):
    %r = nn.conv2d %a, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
    nn.yield %r : tensor<1x4x8x8xf32>
  }
  func.return
}

// -----

func.func @two_ops(%x: memref<2xf32>, %y: memref<2xf32>) {
  // expected-error @+1 {{nn.compute: the body must hold exactly one op and its nn.yield}}
  nn.compute ins(%x : memref<2xf32>) outs(%y : memref<2xf32>) {
  ^bb0(%a: tensor<2xf32>):
    %r = nn.relu %a : tensor<2xf32>
    %s = nn.relu %r : tensor<2xf32>
    nn.yield %s : tensor<2xf32>
  }
  func.return
}

// -----

func.func @arguments_in_order(%x: memref<2xf32>, %z: memref<2xf32>, %y: memref<2xf32>) {
  // expected-error @+1 {{nn.compute: the body's op must take the body's arguments, in order}}
  nn.compute ins(%x, %z : memref<2xf32>, memref<2xf32>) outs(%y : memref<2xf32>) {
  ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>):
    %r = nn.sub %b, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    nn.yield %r : tensor<2xf32>
  }
  func.return
}

// -----

func.func @ins_count(%x: memref<2xf32>, %y: memref<2xf32>) {
  // expected-error @+1 {{nn.compute: 1 ins but the body takes 2 arguments}}
  nn.compute ins(%x : memref<2xf32>) outs(%y : memref<2xf32>) {
  ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>):
    %r = nn.add %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    nn.yield %r : tensor<2xf32>
  }
  func.return
}

// -----

func.func @constant_tensor_type(%y: memref<2xf32>) {
  %k = nn.constant dense<1.0> : tensor<2xf32>
  // expected-error @+1 {{nn.compute: ins 0 is the tensor tensor<2xf32>, but the body expects tensor<2xf32, #layout.layout<"C8c">>}}
  nn.compute ins(%k : tensor<2xf32>) outs(%y : memref<2xf32>) {
  ^bb0(%a: tensor<2xf32, #layout.layout<"C8c">>):
    %r = layout.reorder %a : tensor<2xf32, #layout.layout<"C8c">> -> tensor<2xf32>
    nn.yield %r : tensor<2xf32>
  }
  func.return
}

// -----

func.func @halo_values(%x: memref<1x4x8x8xf32>, %y: memref<1x4x8x8xf32>) {
  // expected-error @+1 {{nn.compute: halo needs 4 non-negative values [top, left, bottom, right]}}
  nn.compute ins(%x : memref<1x4x8x8xf32>) outs(%y : memref<1x4x8x8xf32>) halo [1, 1] {
  ^bb0(%a: tensor<1x4x8x8xf32>):
    %r = nn.relu %a : tensor<1x4x8x8xf32>
    nn.yield %r : tensor<1x4x8x8xf32>
  }
  func.return
}
