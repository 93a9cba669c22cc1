// ERROR: {file}:4:3: error: nn.relu: attribute 'kernel' must be an #nn.kernel<...>, got "relu_any"
// NOTE: it was ignored: select-dispatch then skipped the op as already dispatched.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.relu %x {kernel = "relu_any"} : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
