// Pass pipelines that do not parse, or name a pass, an option or a target that does not exist:
// one error without a location (the pipeline is read before the input).
// RUN: not nnlayout-opt %s -p 'default-pipeline{padding=maybe}' 2>&1 | filecheck %s --check-prefix=BAD-BOOL
// RUN: not nnlayout-opt %s -p 'select-dispatch{target=tpu}' 2>&1 | filecheck %s --check-prefix=BAD-TARGET
// RUN: not nnlayout-opt %s -p 'cse,,dce' 2>&1 | filecheck %s --check-prefix=EMPTY-NAME
// RUN: not nnlayout-opt %s -p 'cse{' 2>&1 | filecheck %s --check-prefix=MALFORMED
// RUN: not nnlayout-opt %s -p 'default-pipeline{target=tpu}' 2>&1 | filecheck %s --check-prefix=PIPELINE-BAD-TARGET
// RUN: not nnlayout-opt %s -p 'select-dispatch{tile=4}' 2>&1 | filecheck %s --check-prefix=UNKNOWN-OPTION
// RUN: not nnlayout-opt %s -p vectorize-everything 2>&1 | filecheck %s --check-prefix=UNKNOWN-PASS

func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// BAD-BOOL: error: option 'padding' of pass 'default-pipeline' takes true or false, got 'maybe'
// BAD-TARGET: error: select-dispatch: unknown target 'tpu'; known targets:
// EMPTY-NAME: error: bad pass pipeline 'cse,,dce': Expected pass name here (at character 5)
// MALFORMED: error: bad pass pipeline 'cse{': Expected argument name here (at character 5)
// PIPELINE-BAD-TARGET: error: default-pipeline (select-dispatch): unknown target 'tpu'; known targets:
// UNKNOWN-OPTION: error: pass 'select-dispatch' has no option 'tile'; its options: target, padding, remarks
// UNKNOWN-PASS: error: unknown pass 'vectorize-everything'; available passes:
