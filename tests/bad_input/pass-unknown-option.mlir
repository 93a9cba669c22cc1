// ARGS: -p select-dispatch{tile=4}
// ERROR: error: pass 'select-dispatch' has no option 'tile'; its options: target, padding, remarks
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
