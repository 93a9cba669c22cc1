// fuse-post-ops reads the target and padding select-dispatch recorded on the module; an
// option given must agree, and a record of the wrong kind is an error at the module.
// RUN: nnlayout-opt %s --split-input-file --verify-diagnostics -p 'fuse-post-ops{target=avx2}'

// expected-error @+1 {{fuse-post-ops: target=avx2, but the module was dispatched with nnlayout.target = "avx512" (recorded by select-dispatch): leave target out, or give the same}}
builtin.module attributes {nnlayout.target = "avx512", nnlayout.padding = true} {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    %y = nn.relu %x {kernel = #nn.kernel<"relu_ref", operands = [""], results = [""], in_place = 0>} : tensor<4xf32>
    func.return %y : tensor<4xf32>
  }
}

// -----

// The same target: nothing to say.
builtin.module attributes {nnlayout.target = "avx2", nnlayout.padding = false} {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    %y = nn.relu %x {kernel = #nn.kernel<"relu_ref", operands = [""], results = [""], in_place = 0>} : tensor<4xf32>
    func.return %y : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{fuse-post-ops: module attribute nnlayout.target must be a string, got 3 : i64}}
builtin.module attributes {nnlayout.target = 3} {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    func.return %x : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{fuse-post-ops: module attribute nnlayout.padding must be true or false, got "no"}}
builtin.module attributes {nnlayout.padding = "no"} {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    func.return %x : tensor<4xf32>
  }
}
