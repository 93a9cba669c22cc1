// ARGS: -p default-pipeline{target=tpu}
// ERROR: error: default-pipeline (select-dispatch): unknown target 'tpu'; known targets:
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
