// nnlayout-translate --to numpy: the key lines of a generated module (its arena, sized as
// plan-memory said; a view at a planned offset; a halo interior as a slice of it; halo fills,
// -inf for max pooling; one kernel call per nn.compute, commented with its op and kernel: K[i]
// on the argument, the others bound to their views at import, then constants they alone read
// dropped), the same results as the interpreter through nnlayout-run, an unplanned input refused.
// RUN: nnlayout-opt %s -p 'default-pipeline{target=avx2}' -o %t.mlir
// RUN: nnlayout-translate %t.mlir --to numpy -o %t.py
// RUN: cat %t.mlir %t.py | filecheck %s
// RUN: nnlayout-run %s -p 'default-pipeline{target=avx2}' --random-inputs 0 --output-dir %t.i > %t.interpreter
// RUN: nnlayout-run %s -p 'default-pipeline{target=avx2}' --random-inputs 0 --output-dir %t.g --backend generated > %t.generated
// RUN: diff %t.interpreter %t.generated
// RUN: filecheck %s --check-prefix=SAME < %t.generated
// RUN: not nnlayout-translate %s -o %t.unplanned.py 2>&1 | filecheck %s --check-prefix=UNPLANNED

func.func @net(%x: tensor<1x3x8x8xf32>) -> tensor<1x8x4x4xf32> {
  %w = nn.constant dense<0.25> : tensor<8x3x3x3xf32>
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x8x8xf32>
  %w2 = nn.constant dense<0.5> : tensor<8x8x3x3xf32>
  %d = nn.conv2d %c, %w2 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  %r = nn.relu %d : tensor<1x8x8x8xf32>
  %p = nn.max_pool2d %r kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x8x8x8xf32> -> tensor<1x8x4x4xf32>
  func.return %p : tensor<1x8x4x4xf32>
}

// CHECK: nnlayout.arena_bytes = [[BYTES:[0-9]+]] : i64
// CHECK: ENTRY = 'net'
// CHECK: PLANNED_IR_SHA256 = '{{[0-9a-f]+}}'
// CHECK: PROGRAM = Program.load(__file__, PLANNED_IR, ENTRY, PLANNED_IR_SHA256)
// CHECK: ARENA_BYTES = [[BYTES]]{{$}}
// CHECK-NEXT: ARENA = aligned_empty(ARENA_BYTES)
// CHECK: w = PROGRAM.constants[0]  # %w: 8x3x3x3
// CHECK: c_1 = np.ndarray((1, 1, 10, 10, 8), np.float32, buffer=ARENA, offset={{[0-9]+}}, strides=(3200, 3200, 320, 32, 4))
// CHECK-NEXT: c_2 = c_1[:, :, 1:9, 1:9]
// CHECK-NEXT: k1 = PROGRAM.on(1, (c,), (c_2,))
// CHECK: w2 = PROGRAM.constants[1]  # %w2: 8x8x3x3 IHW8iO8o
// CHECK: k2 = PROGRAM.on(2, (c_1, w2), (r,))
// CHECK-NEXT: k3 = PROGRAM.on(3, (r,), (r,))
// CHECK: k4 = PROGRAM.on(4, (d,), (p,))
// CHECK: k5 = PROGRAM.on(5, (p,), (p_1,))
// w2 is read by a kernel bound once alone: dropped (its kernel keeps what it reads); w stays,
// passed to K[0] on every run.
// CHECK: del (
// CHECK-NEXT: {{^}}    w2,{{$}}
// CHECK-NEXT: )
// CHECK-NEXT: PROGRAM.release_constants()
// CHECK: def run(*inputs: np.ndarray) -> tuple[np.ndarray, ...]:
// CHECK: (x,) = PROGRAM.arguments(inputs)
// CHECK: K[0]((x, w), (c,))  # %c = nn.conv2d (conv2d_ref) 1x8x8x8
// CHECK-NEXT: fill_border(c_1, (2, 3), (1, 1, 1, 1), 0.0)
// CHECK-NEXT: k1()  # %c_2 = layout.reorder 1x8x8x8 -> NCHW8c
// CHECK-NEXT: fill_border(d, (2, 3), (1, 1, 1, 1), -np.inf)
// CHECK-NEXT: k2()  # %r = nn.conv2d (conv2d_nchwc) 1x8x8x8 NCHW8c halo [1, 1, 1, 1]
// CHECK-NEXT: k3()  # %r = nn.relu (relu_any) 1x8x8x8 NCHW8c
// CHECK-NEXT: k4()  # %p = nn.max_pool2d (max_pool2d_any) 1x8x4x4 NCHW8c halo [1, 1, 1, 1]
// CHECK-NEXT: k5()  # %p_1 = layout.reorder 1x8x4x4 NCHW8c -> plain
// CHECK-NEXT: return (np.array(p_1),)

// SAME: result0: [1, 8, 4, 4] float32 sum={{[-0-9.e+]+}} crc32={{[0-9a-f]{8}$}}

// UNPLANNED: translate.mlir:15:1: error: @net is not planned: the generated module needs bufferized IR with a memory plan; run the pipeline first, e.g. -p 'default-pipeline{target=avx2}'
