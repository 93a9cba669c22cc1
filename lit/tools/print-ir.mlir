// What nnlayout-opt reports around passes, on stderr (stdout keeps the result alone).
// RUN: nnlayout-opt %s -p 'select-dispatch{target=ref},bufferize' --print-ir-before-all --print-ir-after=bufferize -o /dev/null 2>&1 | filecheck %s
// RUN: nnlayout-opt %s -p 'default-pipeline{target=ref}' --print-ir-after=insert-layouts -o /dev/null 2>&1 | filecheck %s --check-prefix=STEP
// RUN: nnlayout-opt %s -p 'select-dispatch{target=ref}' --time-passes -o /dev/null 2>&1 | filecheck %s --check-prefix=TIME
// RUN: not nnlayout-opt %s --print-ir-after=bufferise 2>&1 | filecheck %s --check-prefix=UNKNOWN
// The tools that take a pipeline take the same options.
// RUN: nnlayout-translate %s -p 'default-pipeline{target=ref}' -o %t.py --print-ir-after=plan-memory --time-passes 2>&1 | filecheck %s --check-prefix=TRANSLATE
// RUN: nnlayout-run %s -p 'default-pipeline{target=ref}' --random-inputs 0 --output-dir %t.out --time-passes 2>&1 | filecheck %s --check-prefix=EXEC

// CHECK:      // -----// IR Dump Before select-dispatch //----- //
// CHECK:        %0 = nn.relu %x : tensor<4xf32>
// CHECK-NOT:  IR Dump After
// CHECK:      // -----// IR Dump Before bufferize //----- //
// CHECK:        %0 = nn.relu %x {kernel = #nn.kernel<
// CHECK:      // -----// IR Dump After bufferize //----- //
// CHECK:        func.func @f(%x: memref<4xf32>) -> memref<4xf32>
// CHECK-NOT:  IR Dump

// STEP:       // -----// IR Dump After default-pipeline (insert-layouts) //----- //
// STEP-NEXT:  builtin.module attributes {nnlayout.target = "ref", nnlayout.padding = true} {
// STEP-NOT:   IR Dump

// TIME:       ... Execution time report ...
// TIME:         Total Execution Time: {{[0-9.]+}} seconds
// TIME:         ----Wall Time----  ----Name----
// TIME-NEXT:    {{[0-9.]+}} ({{ *[0-9.]+}}%)  parse
// TIME-NEXT:    {{[0-9.]+}} ({{ *[0-9.]+}}%)  verify
// TIME-NEXT:    {{[0-9.]+}} ({{ *[0-9.]+}}%)  select-dispatch
// TIME-NEXT:    {{[0-9.]+}} ({{ *[0-9.]+}}%)  output
// TIME-NEXT:    {{[0-9.]+}} (100.0%)  Total

// TRANSLATE:      // -----// IR Dump After default-pipeline (plan-memory) //----- //
// TRANSLATE:      nnlayout.arena_bytes =
// TRANSLATE-NOT:  IR Dump
// TRANSLATE:      ----Wall Time----  ----Name----
// TRANSLATE-NEXT: parse and verify
// TRANSLATE:      default-pipeline (plan-memory)
// TRANSLATE-NEXT: verify
// TRANSLATE-NEXT: translate
// TRANSLATE-NEXT: Total

// EXEC:      ----Wall Time----  ----Name----
// EXEC-NEXT: parse and verify
// EXEC:      default-pipeline (plan-memory)
// EXEC-NEXT: verify
// EXEC-NEXT: run (interpreter)
// EXEC-NEXT: Total

// UNKNOWN: error: --print-ir-after: unknown pass 'bufferise' (did you mean 'bufferize'?)
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.relu %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
