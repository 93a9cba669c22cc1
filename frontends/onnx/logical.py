"""Converters of the comparisons (Equal, Less, LessOrEqual, Greater, GreaterOrEqual) and Where
whose inputs are computed at run time, as `nn.compare` and `nn.where` (with only constant
inputs they fold at import). A comparison of floats gives an `i1` mask; one of integers
computed at run time (quantized data, whose scale the comparison would ignore) is refused by
`nn.compare`'s verifier, named at its node.

    %m = "Greater"(%x, %zero)          ->  %m = nn.compare "gt" %x, %zero
    %y = "Where"(%m, %x, %scaled)      ->  %y = nn.where %m, %x, %scaled

torch's `masked_fill(mask, -inf)` exports as Where(mask, -inf, scores) with a constant mask
(a causal attention mask): the mask is an `i1` constant and the scores are selected at run
time.
"""

from __future__ import annotations

import onnx

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.state import ImportState

#: ONNX comparison -> `nn.compare` predicate.
COMPARISONS: dict[str, str] = {onnx_name: p for p, onnx_name in nn.PREDICATES.items()}


def compare(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """One of the `COMPARISONS`, broadcast (opset 7 on; before it, only equal shapes)."""
    lhs, rhs = state.operand(node, 0), state.operand(node, 1)
    if state.opset < 7 and nn.shape_of(lhs) != nn.shape_of(rhs):
        raise state.fail(
            f"{node.op_type} before opset 7 broadcasts only with broadcast=1, which nnlayout "
            "does not import; re-export at opset 7 or later"
        )
    predicate = COMPARISONS[node.op_type]
    state.output(node, state.build(lambda: nn.CompareOp(predicate, lhs, rhs)))


def where(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """Where(condition, X, Y), broadcast."""
    mask, x, y = (state.operand(node, i) for i in range(3))
    state.output(node, state.build(lambda: nn.WhereOp(mask, x, y)))
