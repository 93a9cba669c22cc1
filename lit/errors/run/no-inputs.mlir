// RUN: rm -rf %t
// RUN: not nnlayout-run %s --output-dir %t 2>&1 | filecheck %s
// RUN: not test -e %t
// CHECK: error: @f takes 1 input(s): pass them with --input FILE.npy ... or use --random-inputs SEED

func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
