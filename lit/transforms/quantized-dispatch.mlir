// select-dispatch on quantized data: only kernels that compute on integers are candidates
// (the reference kernels; the blocked max pool pads with -inf), and a remark says why no
// faster kernel runs a q-op. The i8 max pool with pads gets no halo (it would have to hold
// i8's minimum; a qconv2d's its zero point): its kernel pads it.
// RUN: nnlayout-opt %s --verify-diagnostics -p 'select-dispatch{target=avx512 remarks=true}'
// RUN: nnlayout-opt %s -p 'default-pipeline{target=avx512}' | filecheck %s

func.func @f(%x: tensor<1x16x6x6xi8>, %y: tensor<1x16x3x3xi8>) -> tensor<1x16x3x3xi8> {
  // expected-remark @+1 {{nn.max_pool2d: i8 data (quantized), not supported by max_pool2d_any; using max_pool2d_ref}}
  %m = nn.max_pool2d %x kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x16x6x6xi8> -> tensor<1x16x3x3xi8>
  // expected-remark @+1 {{nn.qadd: i8 data (quantized): no sparse/blocked kernel computes nn.qadd on it; using qadd_ref}}
  %a = nn.qadd %m, %y {a_scale = dense<1.0> : tensor<f32>, a_zero_point = dense<-3> : tensor<i8>, b_scale = dense<1.0> : tensor<f32>, b_zero_point = dense<-3> : tensor<i8>, y_scale = dense<2.0> : tensor<f32>, y_zero_point = dense<0> : tensor<i8>} : (tensor<1x16x3x3xi8>, tensor<1x16x3x3xi8>) -> tensor<1x16x3x3xi8>
  func.return %a : tensor<1x16x3x3xi8>
}
// CHECK-NOT:  layout.fill_border
// CHECK:      nn.compute ins(%x : memref<1x16x6x6xi8>)
// CHECK:      nn.max_pool2d {{.*}}max_pool2d_ref
// CHECK:      nn.qadd {{.*}}qadd_ref
