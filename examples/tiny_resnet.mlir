func.func @net(%x: tensor<1x3x16x16xf32>) -> tensor<1x10xf32> {
  %w1 = nn.constant dense<0.05> : tensor<20x3x3x3xf32>
  %b1 = nn.constant dense<0.1> : tensor<20xf32>
  %c1 = nn.conv2d %x, %w1, %b1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x16x16xf32>, tensor<20x3x3x3xf32>, tensor<20xf32>) -> tensor<1x20x16x16xf32>
  %r1 = nn.relu %c1 : tensor<1x20x16x16xf32>
  %w2 = nn.constant dense<0.01> : tensor<20x20x3x3xf32>
  %c2 = nn.conv2d %r1, %w2 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x20x16x16xf32>, tensor<20x20x3x3xf32>) -> tensor<1x20x16x16xf32>
  %r2 = nn.relu %c2 : tensor<1x20x16x16xf32>
  %w3 = nn.constant dense<-0.01> : tensor<20x20x3x3xf32>
  %c3 = nn.conv2d %r2, %w3 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x20x16x16xf32>, tensor<20x20x3x3xf32>) -> tensor<1x20x16x16xf32>
  %s = nn.add %c3, %r1 : (tensor<1x20x16x16xf32>, tensor<1x20x16x16xf32>) -> tensor<1x20x16x16xf32>
  %r3 = nn.relu %s : tensor<1x20x16x16xf32>
  %p = nn.max_pool2d %r3 kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x20x16x16xf32> -> tensor<1x20x8x8xf32>
  %g = nn.global_avg_pool %p : tensor<1x20x8x8xf32> -> tensor<1x20x1x1xf32>
  %f = nn.flatten %g axis 1 : tensor<1x20x1x1xf32> -> tensor<1x20xf32>
  %fw = nn.constant dense<0.1> : tensor<10x20xf32>
  %fb = nn.constant dense<[0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]> : tensor<10xf32>
  %l = nn.gemm %f, %fw, %fb trans_b alpha 1.0 beta 1.0 : (tensor<1x20xf32>, tensor<10x20xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  %y = nn.softmax %l axis 1 : tensor<1x10xf32>
  func.return %y : tensor<1x10xf32>
}
