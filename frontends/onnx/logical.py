"""Converters of the comparisons (Equal, Less, LessOrEqual, Greater, GreaterOrEqual, IsNaN), the
logical operators (And, Or, Xor, Not) and Where whose inputs are computed at run time, as
`nn.compare`, `nn.logical` and `nn.where` (with only constant inputs they fold at import). A
comparison of floats gives an `i1` mask; one of integers computed at run time (quantized data,
whose scale the comparison would ignore) is refused by `nn.compare`'s verifier, named at its
node.

    %m = "Greater"(%x, %zero)          ->  %m = nn.compare "gt" %x, %zero
    %y = "Where"(%m, %x, %scaled)      ->  %y = nn.where %m, %x, %scaled

torch's `masked_fill(mask, -inf)` exports as Where(mask, -inf, scores) with a constant mask
(a causal attention mask): the mask is an `i1` constant and the scores are selected at run
time. transformers builds its attention masks from And of masks (the padding mask, an int64
input cast to bool, with a causal or bidirectional one), and its attention tests the
softmax's result with IsNaN (a row all masked).

    %n = "IsNaN"(%p)                   ->  %n = nn.compare "ne" %p, %p
    %k = "Not"(%m)                     ->  %k = nn.logical "xor" %m, %true
"""

from __future__ import annotations

import numpy as np
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


def is_nan(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """IsNaN(x): x ne x, true exactly where x is NaN."""
    x = state.operand(node, 0)
    state.output(node, state.build(lambda: nn.CompareOp("ne", x, x)))


def logical(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """And, Or, Xor of two masks, broadcast; Not(x) as x xor true."""
    lhs = state.operand(node, 0)
    if node.op_type == "Not":
        true = state.emit(nn.ConstantOp.from_array(np.array(True)))
        state.output(node, state.build(lambda: nn.LogicalOp("xor", lhs, true)))
        return
    rhs = state.operand(node, 1)
    operation = node.op_type.lower()
    state.output(node, state.build(lambda: nn.LogicalOp(operation, lhs, rhs)))
