// ERROR: {file}:3:3: error: nn.neg: operand 0 has element type i32; nn ops compute on floats
func.func @f(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = nn.neg %x : tensor<2xi32>
  func.return %0 : tensor<2xi32>
}
