// RUN: rm -rf %t
// RUN: not nnlayout-run %s -p select-dispatch{target=tpu} --random-inputs 0 --output-dir %t 2>&1 | filecheck %s
// RUN: not test -e %t
// CHECK: error: select-dispatch: unknown target 'tpu'; known targets:

func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
