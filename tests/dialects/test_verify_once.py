"""dialects/verify_once.py: an op whose signature passed the generic checks still runs its
traits and its own verifier, and an op of a new signature gets the whole check."""

from __future__ import annotations

import pytest

from nnlayout.diagnostics import UserError
from nnlayout.dialects.nn import NN
from nnlayout.dialects.verify_once import signature
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.ir.verify import verify_module

COMPUTE = """
func.func @f(%x: memref<1x2x3x3xf32>, %y: memref<1x2x3x3xf32>) {
  nn.compute ins(%x : memref<1x2x3x3xf32>) outs(%y : memref<1x2x3x3xf32>) {
  ^bb0(%a: tensor<1x2x3x3xf32>):
    %r = nn.relu %a : tensor<1x2x3x3xf32>
    nn.yield %r : tensor<1x2x3x3xf32>
  }
  func.return
}
"""


def verify_text(text: str) -> None:
    verify_module(parse_module(make_context(), text, "t.mlir"), text)


def test_every_nn_op_remembers_its_signatures() -> None:
    for op in NN.operations:
        assert "verify" in vars(op.get_irdl_definition()), op.name


def test_a_remembered_yield_outside_a_compute_fails_its_trait() -> None:
    verify_text(COMPUTE)  # the yield's signature passes and is remembered
    stray = """
func.func @g(%t: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %r = nn.relu %t : tensor<1x2x3x3xf32>
  nn.yield %r : tensor<1x2x3x3xf32>
}
"""
    with pytest.raises(UserError, match="nn.compute"):
        verify_text(stray)


def test_a_remembered_compute_still_runs_its_own_verifier() -> None:
    verify_text(COMPUTE)
    wrong_shape = COMPUTE.replace(
        "outs(%y : memref<1x2x3x3xf32>)", "outs(%y : memref<1x2x3x4xf32>)"
    )
    wrong_shape = wrong_shape.replace("%y: memref<1x2x3x3xf32>", "%y: memref<1x2x3x4xf32>")
    with pytest.raises(UserError, match="outs 0 has type memref<1x2x3x4xf32>"):
        verify_text(wrong_shape)


def test_a_new_signature_gets_the_generic_checks() -> None:
    verify_text(COMPUTE)
    # outs must be memrefs (an IRDL constraint): a tensor there is a new signature
    bad = COMPUTE.replace("outs(%y : memref<1x2x3x3xf32>)", "outs(%t : tensor<1x2x3x3xf32>)")
    bad = bad.replace(
        "%y: memref<1x2x3x3xf32>)", "%y: memref<1x2x3x3xf32>, %t: tensor<1x2x3x3xf32>)"
    )
    with pytest.raises(UserError, match="outs"):
        verify_text(bad)


def test_signatures_differ_by_types_and_attributes() -> None:
    module = parse_module(make_context(), COMPUTE, "t.mlir")
    relu = next(op for op in module.walk() if op.name == "nn.relu")
    before = signature(relu)
    relu.attributes["tag"] = relu.results[0].type
    assert signature(relu) != before
