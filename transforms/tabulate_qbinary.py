"""`tabulate-qbinary`: a quantized add or mul of two functions of one 8-bit value becomes one
table of that value (`nn.qlookup`).

Why: onnxruntime's `quantize_static` quantizes a swish, x * sigmoid(x), as two ops: the
sigmoid between a dequantize and a quantize (`fold-qdq` makes it a table of x), then the
product of x and that result, both dequantized, quantized again (`nn.qmul` of x and the
table's result); MobileNetV3's hardswish, x * hardsigmoid(x), likewise. torch's exports write
one op, which fold-qdq tabulates at once. Each operand of the qmul is a function of x alone,
so its result is too: 256 entries, the qmul's reference kernel on each pair of operand values
(exactly what it computes for every input), one pass over the data instead of a lookup and a
product with zero points (figures: docs/benchmarks-int8.md).

    %s = nn.qlookup %x {table = ..., x_scale = ..., y_scale = ..., ...} : tensor<..xui8> -> ...
    %y = nn.qmul %x, %s {a_scale = ..., b_scale = ..., y_scale = ..., ...}
  becomes
    %y = nn.qlookup %x {table = ..., x_scale = (x's), y_scale = (the qmul's y), ...}

The pattern: an `nn.qadd` or `nn.qmul` each of whose operands is x itself or an `nn.qlookup`
of x (no broadcasting: both of x's shape), per-tensor parameters, the result of x's 8-bit
type, no kernel chosen yet. A lookup read by nothing else afterwards is erased. A table of a
table's result read only there then composes with it into one (a quantized transformer's
GELU, x * (1 + erf(x / sqrt 2)) then * 0.5, becomes one table). It runs after `fold-qdq` in
`default-pipeline`, before `select-dispatch`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import KERNEL_ATTR
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.transforms.stages import require_tensor_level


def _source(value: SSAValue) -> SSAValue:
    """The value `value` is a function of: a lookup's input (no kernel chosen), else itself."""
    owner = value.owner
    if isinstance(owner, nn.QLookupOp) and KERNEL_ATTR not in owner.attributes:
        return owner.input
    return value


def _values(value: SSAValue, source: SSAValue, inputs: np.ndarray) -> np.ndarray:
    """`value` at each of `inputs`, the values of `source` (a lookup's: its reference
    kernel on them)."""
    if value is source:
        return inputs
    return REFERENCE_KERNELS[nn.QLookupOp](_lookup(value), [inputs])


@dataclass
class TabulateQBinary(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.QBinaryOp, rewriter: PatternRewriter) -> None:
        if KERNEL_ATTR in op.attributes:
            return
        source = _source(op.lhs)
        if _source(op.rhs) is not source:
            return
        x_type = nn.tensor_type(source).element_type
        params = [op.qparams(side) for side in "aby"]
        if any(p.per_axis for p in params) or params[2].element_type != x_type:
            return
        if not nn.shape_of(op.lhs) == nn.shape_of(op.rhs) == nn.shape_of(source):
            return
        low, high = nn.integer_range(x_type)
        inputs = np.arange(low, high + 1).astype(nn.numpy_dtype(x_type))
        operands = [_values(v, source, inputs) for v in (op.lhs, op.rhs)]
        table = REFERENCE_KERNELS[type(op)](op, operands)
        if op.lhs is source or op.rhs is source:
            x = params[0] if op.lhs is source else params[1]
        else:  # both operands lookups of x: x's parameters there
            x = _lookup(op.lhs).qparams("x")
        lookup = nn.QLookupOp(source, table.tolist(), (x, params[2]))
        lookup.location = op.location
        lookup.output.name_hint = op.output.name_hint
        read = {v.owner for v in (op.lhs, op.rhs) if v is not source}
        rewriter.replace(op, lookup)
        for inner in read:
            if not inner.results[0].uses:  # type: ignore[union-attr]
                rewriter.erase(inner)  # type: ignore[arg-type]


@dataclass
class ComposeLookups(RewritePattern):
    """A table of a table's result read only there: one table (the GELU's x * (1 + erf)
    table, then * 0.5)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.QLookupOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if (
            not isinstance(inner, nn.QLookupOp)
            or not op.input.has_one_use()
            or any(KERNEL_ATTR in o.attributes for o in (op, inner))
        ):
            return
        table = REFERENCE_KERNELS[nn.QLookupOp](op, [inner.values()])
        params = (inner.qparams("x"), op.qparams("y"))
        composed = nn.QLookupOp(inner.input, table.tolist(), params)
        composed.location = op.location
        composed.output.name_hint = op.output.name_hint
        rewriter.replace(op, composed)
        rewriter.erase(inner)


def _lookup(value: SSAValue) -> nn.QLookupOp:
    owner = value.owner
    assert isinstance(owner, nn.QLookupOp)
    return owner


@dataclass(frozen=True)
class TabulateQBinaryPass(ModulePass):
    name = "tabulate-qbinary"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        patterns = GreedyRewritePatternApplier([TabulateQBinary(), ComposeLookups()])
        PatternRewriteWalker(patterns).rewrite_module(op)
