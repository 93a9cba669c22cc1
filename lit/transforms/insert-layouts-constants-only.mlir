// RUN: nnlayout-opt %s --remarks -p 'select-dispatch{target=avx2},insert-layouts' 2>&1 | filecheck %s

// Constants and constant expressions never get a kernel (they are evaluated at load), so a
// module holding nothing else was dispatched all the same: no remark says otherwise.
// CHECK-NOT: remark
// CHECK: %r = nn.relu %c : tensor<4xf32>
// CHECK-NOT: remark
func.func @f() -> tensor<4xf32> {
  %c = nn.constant dense<[1.0, -2.0, 3.0, -4.0]> : tensor<4xf32>
  %r = nn.relu %c : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
