// extend-ranks: an operand of a broadcasting element-wise op of lower rank than the result is
// reshaped to the result's rank (1s prepended), once per value; operands of the result's
// rank, and ops that do not broadcast, are left alone. The program computes the same.
// RUN: nnlayout-opt %s -p extend-ranks | filecheck %s
// RUN: nnlayout-run %s --random-inputs 0 --output-dir %t.before > %t.txt
// RUN: nnlayout-opt %s -p extend-ranks | nnlayout-run - --random-inputs 0 --output-dir %t.after >> %t.txt
// RUN: filecheck %s --check-prefix=SAME < %t.txt

// SAME:      result0: [1, 5, 4, 4] float32 sum={{[-0-9.e+]+}} crc32=[[CRC:[0-9a-f]+]]
// SAME-NEXT: result0: [1, 5, 4, 4] float32 sum={{[-0-9.e+]+}} crc32=[[CRC]]

// CHECK-LABEL: func.func @f
// CHECK-NEXT:    %v_1 = nn.reshape %v : tensor<5x1x1xf32> -> tensor<1x5x1x1xf32>
// CHECK-NEXT:    %s = nn.constant dense<{{.*}}> : tensor<5x1x1xf32>
// CHECK-NEXT:    %s_1 = nn.reshape %s : tensor<5x1x1xf32> -> tensor<1x5x1x1xf32>
// CHECK-NEXT:    %k = nn.constant dense<2.500000e-01> : tensor<1xf32>
// CHECK-NEXT:    %k_1 = nn.reshape %k : tensor<1xf32> -> tensor<1x1x1x1xf32>
// CHECK-NEXT:    %m = nn.mul %x, %s_1 : (tensor<1x5x4x4xf32>, tensor<1x5x1x1xf32>) -> tensor<1x5x4x4xf32>
// CHECK-NEXT:    %a = nn.add %s_1, %m : (tensor<1x5x1x1xf32>, tensor<1x5x4x4xf32>) -> tensor<1x5x4x4xf32>
// CHECK-NEXT:    %p = nn.prelu %a, %v_1 : (tensor<1x5x4x4xf32>, tensor<1x5x1x1xf32>) -> tensor<1x5x4x4xf32>
// CHECK-NEXT:    %r = nn.relu %p : tensor<1x5x4x4xf32>
// CHECK-NEXT:    %t = nn.sum %r, %k_1, %x : (tensor<1x5x4x4xf32>, tensor<1x1x1x1xf32>, tensor<1x5x4x4xf32>) -> tensor<1x5x4x4xf32>
func.func @f(%x: tensor<1x5x4x4xf32>, %v: tensor<5x1x1xf32>) -> tensor<1x5x4x4xf32> {
  %s = nn.constant dense<[[[1.0]], [[-2.0]], [[3.0]], [[0.5]], [[-1.5]]]> : tensor<5x1x1xf32>
  %k = nn.constant dense<0.25> : tensor<1xf32>
  %m = nn.mul %x, %s : (tensor<1x5x4x4xf32>, tensor<5x1x1xf32>) -> tensor<1x5x4x4xf32>
  %a = nn.add %s, %m : (tensor<5x1x1xf32>, tensor<1x5x4x4xf32>) -> tensor<1x5x4x4xf32>
  %p = nn.prelu %a, %v : (tensor<1x5x4x4xf32>, tensor<5x1x1xf32>) -> tensor<1x5x4x4xf32>
  %r = nn.relu %p : tensor<1x5x4x4xf32>
  %t = nn.sum %r, %k, %x : (tensor<1x5x4x4xf32>, tensor<1xf32>, tensor<1x5x4x4xf32>) -> tensor<1x5x4x4xf32>
  func.return %t : tensor<1x5x4x4xf32>
}
