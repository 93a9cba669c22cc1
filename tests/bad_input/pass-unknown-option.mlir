// ARGS: -p select-dispatch{tile=4}
// ERROR: error: bad pass options in 'select-dispatch{tile=4}': Provided arguments ["tile"] not found in expected arguments
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
