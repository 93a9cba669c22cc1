// RoBERTa's position ids through the default pipeline: a mask made i32, summed along the
// sequence, multiplied by itself, made i64 and shifted, then gathered. Only the reference
// kernels compute on integers (dispatch says why); the i32 and i64 buffers share the arena,
// 4 and 8 bytes an element, the product in place over the running sum.
// RUN: nnlayout-opt %s -p 'default-pipeline{target=onednn remarks=true}' 2>&1 | filecheck %s

func.func @positions(%ids: tensor<1x6xi64>) -> tensor<1x6x16xf32> {
  %wpe = nn.constant external "wpe" : tensor<9x16xf32>
  %pad = nn.constant dense<1> : tensor<i64>
  %real = nn.compare "ne" %ids, %pad : (tensor<1x6xi64>, tensor<i64>) -> tensor<1x6xi1>
  %mask = nn.cast %real : tensor<1x6xi1> -> tensor<1x6xi32>
  %count = nn.cumsum %mask axis 1 : tensor<1x6xi32>
  %counted = nn.mul %count, %mask : (tensor<1x6xi32>, tensor<1x6xi32>) -> tensor<1x6xi32>
  %wide = nn.cast %counted : tensor<1x6xi32> -> tensor<1x6xi64>
  %positions = nn.add %wide, %pad : (tensor<1x6xi64>, tensor<i64>) -> tensor<1x6xi64>
  %x = nn.gather %wpe, %positions axis 0 : (tensor<9x16xf32>, tensor<1x6xi64>) -> tensor<1x6x16xf32>
  func.return %x : tensor<1x6x16xf32>
}
// CHECK: remark: [select-dispatch] nn.cumsum: i32 data (integers): no sparse/blas/onednn/blocked kernel computes nn.cumsum on it; using cumsum_ref
// CHECK: remark: [select-dispatch] nn.mul: i32 data (integers), not supported by mul_onednn; using mul_ref
// CHECK: remark: [select-dispatch] nn.add: i64 data (indices), not supported by add_onednn; using add_ref
// CHECK: nnlayout.arena_bytes = 128 : i64, nnlayout.lower_bound_bytes = 128 : i64
// CHECK: %mask = memref.view %arena[%[[MASK:.*]]][] : memref<128xi8> to memref<1x6xi32>
// CHECK: %count = memref.view %arena[%[[COUNT:.*]]][] : memref<128xi8> to memref<1x6xi32>
// CHECK: nn.cumsum {{.*}}axis 1 {kernel = #nn.kernel<"cumsum_ref", operands = [""], results = [""]>} : tensor<1x6xi32>
// CHECK: %counted = memref.view %arena[%[[COUNT]]][] : memref<128xi8> to memref<1x6xi32>
// CHECK: nn.mul {{.*}}#nn.kernel<"mul_ref", operands = ["", ""], results = [""], in_place = 0>} : (tensor<1x6xi32>, tensor<1x6xi32>) -> tensor<1x6xi32>
// CHECK: %wide = memref.view %arena[%[[MASK]]][] : memref<128xi8> to memref<1x6xi64>
// CHECK: nn.cast {{.*}} : tensor<1x6xi32> -> tensor<1x6xi64>
// CHECK: nn.add {{.*}}#nn.kernel<"add_ref"
// CHECK: nn.gather {{.*}}#nn.kernel<"gather_ref"
