// a reference kernel listed with NHWC: insert-layouts reorders as listed, and softmax_ref normalised the physical array's axis 1 (W, not C): wrong numbers
// RUN: rm -rf %t
// RUN: not nnlayout-run %s -p insert-layouts --random-inputs 0 --output-dir %t 2>&1 | filecheck %s -DFILE %s
// RUN: not test -e %t
// CHECK: [[FILE]]:8:3: error: #nn.kernel<"softmax_ref">: operand 0 is NHWC; the kernel takes it plain

func.func @f(%x: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %y = nn.softmax %x axis 1 {kernel = #nn.kernel<"softmax_ref", operands = ["NHWC"], results = ["NHWC"]>} : tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}
