// Token ids through the default pipeline: nn.gather runs its reference kernel on plain data
// (the only kernel that reads i64 indices: dispatch says why), the int64 attention mask is
// reshaped as a view of the argument and cast by the reference kernel, and the ids transposed
// ([1, 6] -> [6, 1]: only an axis of size 1 moves, sink-movement makes it a reshape) are a
// view of the argument too.
// RUN: nnlayout-opt %s -p 'default-pipeline{target=onednn remarks=true}' 2>&1 | filecheck %s

func.func @embed(%ids: tensor<1x6xi64>, %mask: tensor<1x6xi64>) -> (tensor<1x6x16xf32>, tensor<6x1x16xf32>) {
  %table = nn.constant external "wte" : tensor<50x16xf32>
  %x = nn.gather %table, %ids axis 0 : (tensor<50x16xf32>, tensor<1x6xi64>) -> tensor<1x6x16xf32>
  %m = nn.reshape %mask : tensor<1x6xi64> -> tensor<1x6x1xi64>
  %f = nn.cast %m : tensor<1x6x1xi64> -> tensor<1x6x1xf32>
  %y = nn.mul %x, %f : (tensor<1x6x16xf32>, tensor<1x6x1xf32>) -> tensor<1x6x16xf32>
  %t = nn.transpose %ids perm [1, 0] : tensor<1x6xi64> -> tensor<6x1xi64>
  %z = nn.gather %table, %t axis 0 : (tensor<50x16xf32>, tensor<6x1xi64>) -> tensor<6x1x16xf32>
  func.return %y, %z : tensor<1x6x16xf32>, tensor<6x1x16xf32>
}
// CHECK: remark: [select-dispatch] nn.gather: i64 data (indices): no sparse/blas/onednn/blocked kernel computes nn.gather on it; using gather_ref
// CHECK: remark: [select-dispatch] nn.reshape: i64 data (indices), not supported by reshape_onednn; using reshape_ref
// CHECK: remark: [select-dispatch] nn.cast: i64 data (indices), not supported by cast_onednn; using cast_ref
// CHECK: nnlayout.arena_bytes = 448 : i64
// CHECK: %x = memref.view %arena[%{{.*}}][] : memref<448xi8> to memref<1x6x16xf32>
// CHECK: nn.gather {{.*}}#nn.kernel<"gather_ref", operands = ["", ""], results = [""]>
// CHECK: %m = memref.reinterpret_cast %mask to offset: [0], sizes: [1, 6, 1], strides: [6, 1, 1] : memref<1x6xi64> to memref<1x6x1xi64>
// CHECK: nn.cast {{.*}}#nn.kernel<"cast_ref"{{.*}} : tensor<1x6x1xi64> -> tensor<1x6x1xf32>
// CHECK: %t = memref.reinterpret_cast %ids to offset: [0], sizes: [6, 1], strides: [1, 1] : memref<1x6xi64> to memref<6x1xi64>
// CHECK: nn.compute ins(%table, %t : tensor<50x16xf32>, memref<6x1xi64>)
