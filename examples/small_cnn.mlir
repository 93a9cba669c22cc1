func.func @net(%x: tensor<1x3x8x8xf32>) -> tensor<1x10xf32> {
  %w = nn.constant dense<0.5> : tensor<4x3x3x3xf32>
  %b = nn.constant dense<0.1> : tensor<4xf32>
  %c = nn.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %r = nn.relu %c : tensor<1x4x8x8xf32>
  %p = nn.max_pool2d %r kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  %f = nn.flatten %p axis 1 : tensor<1x4x4x4xf32> -> tensor<1x64xf32>
  %fw = nn.constant dense<0.01> : tensor<10x64xf32>
  %fb = nn.constant dense<0.0> : tensor<10xf32>
  %g = nn.gemm %f, %fw, %fb trans_b alpha 1.0 beta 1.0 : (tensor<1x64xf32>, tensor<10x64xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  %s = nn.softmax %g axis 1 : tensor<1x10xf32>
  func.return %s : tensor<1x10xf32>
}
