// lit.cfg.py substitutes the tools (and `not`) only where they stand as words of a RUN line:
// the check prefix below ends in "not ", which must not become a python command.
// RUN: nnlayout-opt %s | filecheck --check-prefix=knot %s
// RUN: not nnlayout-opt %s -p no-such-pass 2>&1 | filecheck --check-prefix=CANNOT %s

// knot: nn.relu %x : tensor<4xf32>
// CANNOT: error: unknown pass
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.relu %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
