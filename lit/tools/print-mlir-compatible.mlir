// --print-mlir-compatible: what mlir-opt and iree-opt read with --allow-unregistered-dialect
// (tests/ir/test_mlir_round_trip.py runs iree-opt on every stage): nn and layout ops generic,
// func/arith/memref ops custom, memref.alloc's alignment as MLIR spells it. What MLIR prints
// back reads into nnlayout-opt.
// RUN: nnlayout-opt %s -p 'default-pipeline{target=avx2}' --print-mlir-compatible | filecheck %s
// RUN: nnlayout-opt %s -p 'default-pipeline{target=avx2}' --print-mlir-compatible | nnlayout-opt -p verify-memory-plan | filecheck %s --check-prefix=BACK

func.func @f(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %w = nn.constant dense<0.1> : tensor<16x16x3x3xf32>
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %r = nn.relu %c : tensor<1x16x8x8xf32>
  func.return %r : tensor<1x16x8x8xf32>
}
// CHECK:      func.func @f(%x: memref<1x16x8x8xf32>) -> memref<1x16x8x8xf32>
// CHECK:      %arena = memref.alloc() alignment = 64 : memref<{{[0-9]+}}xi8>
// CHECK:      = memref.view %arena[
// CHECK:      "nn.compute"(
// CHECK:      "nn.conv2d"(
// CHECK:      "nn.yield"(
// CHECK-NOT:  {alignment

// BACK: %arena = memref.alloc() {alignment = 64 : i64}
// BACK: nn.compute ins(
