// default-pipeline's report and svg options are plan-memory's: the plan of the whole pipeline
// printed to stderr and drawn, without spelling out every pass.
// RUN: rm -rf %t && mkdir -p %t
// RUN: nnlayout-opt %s -p 'default-pipeline{target=ref report svg="%t/plan.svg"}' -o /dev/null 2>&1 | filecheck %s
// RUN: filecheck %s --check-prefix=SVG < %t/plan.svg

// CHECK:      @chain: 2 buffers over 4 steps
// CHECK-NEXT:   arena {{.*}}(greedy-by-size;
// CHECK-NEXT:   lower bound
// SVG: <svg
// SVG: lower bound
func.func @chain(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %a = nn.relu %x : tensor<1x4x8x8xf32>
  %b = nn.sigmoid %a : tensor<1x4x8x8xf32>
  %c = nn.tanh %b : tensor<1x4x8x8xf32>
  func.return %c : tensor<1x4x8x8xf32>
}
