// TOOL: nnlayout-run
// ARGS: --entry g --random-inputs 0
// ERROR: error: no function @g in the module (functions: @f)
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
