// ERROR: {file}:3:3: error: nn.neg: operand 0 has element type i32; nn ops compute on f16, f32 or f64
func.func @f(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = nn.neg %x : tensor<2xi32>
  func.return %0 : tensor<2xi32>
}
