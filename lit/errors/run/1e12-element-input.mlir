// RUN: rm -rf %t
// RUN: not nnlayout-run %s --random-inputs 0 --output-dir %t 2>&1 | filecheck %s
// RUN: not test -e %t
// CHECK: error: argument 1 (%x): [1000000, 1000000] float32 needs 4,000,000,000,000 bytes (3.6 TiB), more than this machine's memory

func.func @f(%x: tensor<1000000x1000000xf32>) -> tensor<1000000x1000000xf32> {
  %0 = nn.relu %x : tensor<1000000x1000000xf32>
  func.return %0 : tensor<1000000x1000000xf32>
}
