// A pass from outside the package: --load runs the file, whose register_pass makes the pass
// known to -p (see examples/fold_relu_of_relu.py).
// RUN: nnlayout-opt %s --load %S/../../examples/fold_relu_of_relu.py -p fold-relu-of-relu | filecheck %s
// RUN: not nnlayout-opt %s -p fold-relu-of-relu 2>&1 | filecheck %s --check-prefix=UNLOADED

// CHECK:      func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:   %0 = nn.relu %x : tensor<4xf32>
// CHECK-NEXT:   func.return %0 : tensor<4xf32>
// UNLOADED: error: unknown pass 'fold-relu-of-relu'
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.relu %x : tensor<4xf32>
  %1 = nn.relu %0 : tensor<4xf32>
  %2 = nn.relu %1 : tensor<4xf32>
  func.return %2 : tensor<4xf32>
}
