// RUN: nnlayout-opt %s -p 'default-pipeline{target=ref verify=true}' | filecheck %s
// RUN: nnlayout-opt %s -p 'default-pipeline{target=ref report=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=REPORT

// Three ConvNeXt blocks as torch's dynamo exporter writes them (imported from onnx.helper's
// model in tests/transforms/test_plan_memory_convnext.py, constants made splats): depthwise
// 7x7 conv, transpose to NHWC, layer norm, matmul + add (4x wider), gelu, matmul + add,
// transpose back, layer scale, residual add. Each block's wide buffer and the residual
// chains that overlap from one block to the next leave every ordering heuristic 1/4 above
// the lower bound (convnext_tiny's dynamo export stayed at 1.167 on host); the local search
// after them reaches it, and verify-memory-plan accepts the plan.

func.func @main(%x: tensor<1x20x8x8xf32>) -> tensor<1x20x8x8xf32> {
  %stem_nhwc = nn.transpose %x perm [0, 2, 3, 1] : tensor<1x20x8x8xf32> -> tensor<1x8x8x20xf32>
  %ln_w = nn.constant dense<0.1> : tensor<20xf32>
  %ln_b = nn.constant dense<0.1> : tensor<20xf32>
  %stem_ln = nn.layer_norm %stem_nhwc, %ln_w, %ln_b axis -1 epsilon 1.000000e-06 : (tensor<1x8x8x20xf32>, tensor<20xf32>, tensor<20xf32>) -> tensor<1x8x8x20xf32>
  %stem = nn.transpose %stem_ln perm [0, 3, 1, 2] : tensor<1x8x8x20xf32> -> tensor<1x20x8x8xf32>
  %dw = nn.constant dense<0.1> : tensor<20x1x7x7xf32>
  %dwb = nn.constant dense<0.1> : tensor<20xf32>
  %conv = nn.conv2d %stem, %dw, %dwb strides [1, 1] pads [3, 3, 3, 3] dilations [1, 1] groups 20 : (tensor<1x20x8x8xf32>, tensor<20x1x7x7xf32>, tensor<20xf32>) -> tensor<1x20x8x8xf32>
  %permute = nn.transpose %conv perm [0, 2, 3, 1] : tensor<1x20x8x8xf32> -> tensor<1x8x8x20xf32>
  %ln = nn.layer_norm %permute, %ln_w, %ln_b axis -1 epsilon 1.000000e-06 : (tensor<1x8x8x20xf32>, tensor<20xf32>, tensor<20xf32>) -> tensor<1x8x8x20xf32>
  %fc1 = nn.constant dense<0.1> : tensor<20x80xf32>
  %mm1 = nn.matmul %ln, %fc1 : (tensor<1x8x8x20xf32>, tensor<20x80xf32>) -> tensor<1x8x8x80xf32>
  %fc1b = nn.constant dense<0.1> : tensor<80xf32>
  %linear1 = nn.add %mm1, %fc1b : (tensor<1x8x8x80xf32>, tensor<80xf32>) -> tensor<1x8x8x80xf32>
  %gelu = nn.gelu %linear1 : tensor<1x8x8x80xf32>
  %fc2 = nn.constant dense<0.1> : tensor<80x20xf32>
  %mm2 = nn.matmul %gelu, %fc2 : (tensor<1x8x8x80xf32>, tensor<80x20xf32>) -> tensor<1x8x8x20xf32>
  %fc2b = nn.constant dense<0.1> : tensor<20xf32>
  %linear2 = nn.add %mm2, %fc2b : (tensor<1x8x8x20xf32>, tensor<20xf32>) -> tensor<1x8x8x20xf32>
  %back = nn.transpose %linear2 perm [0, 3, 1, 2] : tensor<1x8x8x20xf32> -> tensor<1x20x8x8xf32>
  %scale = nn.constant dense<0.1> : tensor<20x1x1xf32>
  %mul = nn.mul %scale, %back : (tensor<20x1x1xf32>, tensor<1x20x8x8xf32>) -> tensor<1x20x8x8xf32>
  %add = nn.add %mul, %stem : (tensor<1x20x8x8xf32>, tensor<1x20x8x8xf32>) -> tensor<1x20x8x8xf32>
  %dw_1 = nn.constant dense<0.1> : tensor<20x1x7x7xf32>
  %dwb_1 = nn.constant dense<0.1> : tensor<20xf32>
  %conv_1 = nn.conv2d %add, %dw_1, %dwb_1 strides [1, 1] pads [3, 3, 3, 3] dilations [1, 1] groups 20 : (tensor<1x20x8x8xf32>, tensor<20x1x7x7xf32>, tensor<20xf32>) -> tensor<1x20x8x8xf32>
  %permute_1 = nn.transpose %conv_1 perm [0, 2, 3, 1] : tensor<1x20x8x8xf32> -> tensor<1x8x8x20xf32>
  %ln_1 = nn.layer_norm %permute_1, %ln_w, %ln_b axis -1 epsilon 1.000000e-06 : (tensor<1x8x8x20xf32>, tensor<20xf32>, tensor<20xf32>) -> tensor<1x8x8x20xf32>
  %fc1_1 = nn.constant dense<0.1> : tensor<20x80xf32>
  %mm1_1 = nn.matmul %ln_1, %fc1_1 : (tensor<1x8x8x20xf32>, tensor<20x80xf32>) -> tensor<1x8x8x80xf32>
  %fc1b_1 = nn.constant dense<0.1> : tensor<80xf32>
  %linear1_1 = nn.add %mm1_1, %fc1b_1 : (tensor<1x8x8x80xf32>, tensor<80xf32>) -> tensor<1x8x8x80xf32>
  %gelu_1 = nn.gelu %linear1_1 : tensor<1x8x8x80xf32>
  %fc2_1 = nn.constant dense<0.1> : tensor<80x20xf32>
  %mm2_1 = nn.matmul %gelu_1, %fc2_1 : (tensor<1x8x8x80xf32>, tensor<80x20xf32>) -> tensor<1x8x8x20xf32>
  %fc2b_1 = nn.constant dense<0.1> : tensor<20xf32>
  %linear2_1 = nn.add %mm2_1, %fc2b_1 : (tensor<1x8x8x20xf32>, tensor<20xf32>) -> tensor<1x8x8x20xf32>
  %back_1 = nn.transpose %linear2_1 perm [0, 3, 1, 2] : tensor<1x8x8x20xf32> -> tensor<1x20x8x8xf32>
  %scale_1 = nn.constant dense<0.1> : tensor<20x1x1xf32>
  %mul_1 = nn.mul %scale_1, %back_1 : (tensor<20x1x1xf32>, tensor<1x20x8x8xf32>) -> tensor<1x20x8x8xf32>
  %add_1 = nn.add %mul_1, %add : (tensor<1x20x8x8xf32>, tensor<1x20x8x8xf32>) -> tensor<1x20x8x8xf32>
  %dw_2 = nn.constant dense<0.1> : tensor<20x1x7x7xf32>
  %dwb_2 = nn.constant dense<0.1> : tensor<20xf32>
  %conv_2 = nn.conv2d %add_1, %dw_2, %dwb_2 strides [1, 1] pads [3, 3, 3, 3] dilations [1, 1] groups 20 : (tensor<1x20x8x8xf32>, tensor<20x1x7x7xf32>, tensor<20xf32>) -> tensor<1x20x8x8xf32>
  %permute_2 = nn.transpose %conv_2 perm [0, 2, 3, 1] : tensor<1x20x8x8xf32> -> tensor<1x8x8x20xf32>
  %ln_2 = nn.layer_norm %permute_2, %ln_w, %ln_b axis -1 epsilon 1.000000e-06 : (tensor<1x8x8x20xf32>, tensor<20xf32>, tensor<20xf32>) -> tensor<1x8x8x20xf32>
  %fc1_2 = nn.constant dense<0.1> : tensor<20x80xf32>
  %mm1_2 = nn.matmul %ln_2, %fc1_2 : (tensor<1x8x8x20xf32>, tensor<20x80xf32>) -> tensor<1x8x8x80xf32>
  %fc1b_2 = nn.constant dense<0.1> : tensor<80xf32>
  %linear1_2 = nn.add %mm1_2, %fc1b_2 : (tensor<1x8x8x80xf32>, tensor<80xf32>) -> tensor<1x8x8x80xf32>
  %gelu_2 = nn.gelu %linear1_2 : tensor<1x8x8x80xf32>
  %fc2_2 = nn.constant dense<0.1> : tensor<80x20xf32>
  %mm2_2 = nn.matmul %gelu_2, %fc2_2 : (tensor<1x8x8x80xf32>, tensor<80x20xf32>) -> tensor<1x8x8x20xf32>
  %fc2b_2 = nn.constant dense<0.1> : tensor<20xf32>
  %linear2_2 = nn.add %mm2_2, %fc2b_2 : (tensor<1x8x8x20xf32>, tensor<20xf32>) -> tensor<1x8x8x20xf32>
  %back_2 = nn.transpose %linear2_2 perm [0, 3, 1, 2] : tensor<1x8x8x20xf32> -> tensor<1x20x8x8xf32>
  %scale_2 = nn.constant dense<0.1> : tensor<20x1x1xf32>
  %mul_2 = nn.mul %scale_2, %back_2 : (tensor<20x1x1xf32>, tensor<1x20x8x8xf32>) -> tensor<1x20x8x8xf32>
  %add_2 = nn.add %mul_2, %add_1 : (tensor<1x20x8x8xf32>, tensor<1x20x8x8xf32>) -> tensor<1x20x8x8xf32>
  func.return %add_2 : tensor<1x20x8x8xf32>
}

// CHECK-LABEL: func.func @main
// CHECK-SAME: nnlayout.arena_bytes = [[BYTES:[0-9]+]] : i64, nnlayout.lower_bound_bytes = [[BYTES]] : i64

// REPORT:      @main: 33 buffers over 40 steps
// REPORT-NEXT:   arena {{.*}} 40.3 KiB  (local-search from greedy-by-size; greedy-by-size 50.6 KiB, greedy-by-size-last-use 50.6 KiB, greedy-by-breadth 50.6 KiB, best-fit-by-area 50.6 KiB, best-fit-by-duration 50.6 KiB, local-search 40.3 KiB)
// REPORT-NEXT:   lower bound {{.*}} 40.3 KiB  (arena/bound 1.000, peak at step 7)
