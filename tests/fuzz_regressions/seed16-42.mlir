// scripts/fuzz_programs.py --seed 16, program 42, every target: %0 is placed in the concat %1
// (twice) and read again by the concat %8; the batch norm after %1 ran in place in %1's
// buffer (it shares max_pool's halo), overwriting %0 before %8 copied it.
builtin.module {
  func.func @main(%x: tensor<2x4x1x3xf32>) -> tensor<2x20x1x3xf32> {
    %0 = nn.clip %x max 2.000000e+00 : tensor<2x4x1x3xf32>
    %1 = nn.concat %0, %0 axis 1 : (tensor<2x4x1x3xf32>, tensor<2x4x1x3xf32>) -> tensor<2x8x1x3xf32>
    %2 = nn.constant dense<[-0.247776613, -0.0270835105, 0.59950459, 0.0312385205, 0.190190285, -0.655969441, 0.795139432, 0.363392323]> : tensor<8xf32>
    %3 = nn.constant dense<[0.981744289, -0.207340971, 0.128139481, 0.868031085, 0.891490579, 0.0219026152, 0.212237746, 0.720391512]> : tensor<8xf32>
    %4 = nn.constant dense<[-0.635030091, -0.778028727, -0.355306357, -0.0816165507, 0.53821063, 0.906866491, 0.986161649, -0.785133421]> : tensor<8xf32>
    %5 = nn.constant dense<[0.2555089, 1.81517637, 1.14799535, 0.536709666, 0.763292253, 0.569117069, 5.237580e-01, 1.82475328]> : tensor<8xf32>
    %6 = nn.batch_norm %1, %2, %3, %4, %5 epsilon 1.000000e-05 : (tensor<2x8x1x3xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x1x3xf32>
    %7 = nn.max_pool2d %6 kernel [2, 2] strides [1, 1] pads [1, 0, 1, 2] dilations [2, 2] ceil_mode : tensor<2x8x1x3xf32> -> tensor<2x8x1x3xf32>
    %8 = nn.concat %7, %0, %7 axis -3 : (tensor<2x8x1x3xf32>, tensor<2x4x1x3xf32>, tensor<2x8x1x3xf32>) -> tensor<2x20x1x3xf32>
    func.return %8 : tensor<2x20x1x3xf32>
  }
}
