"""Softmax (`nn.softmax`) and its logarithm (`nn.log_softmax`) along any axis of plain data,
as oneDNN's softmax primitive (`softmax_accurate`: exp(x - max) / sum, and `softmax_log`:
x - max - log(sum(exp(x - max))), as the reference computes them).

oneDNN's exp turns NaN into inf and its max skips NaN, so the kernel runs oneDNN on calls
whose input is finite and numpy otherwise (`eltwise.finite_only`; a row of -inf is NaN in
both only by the reference's arithmetic).
"""

from __future__ import annotations

from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import PLAIN_LAYOUT
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.common import (
    NOT_F32,
    Layouts,
    contiguous_md,
    is_f32,
    is_fast,
    op_key,
    remembered,
)
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.registry import Target, layouts_refusal

SoftmaxLike = nn.SoftmaxOp | nn.LogSoftmaxOp


def _softmax_pd(op: SoftmaxLike) -> b.PrimitiveDesc:
    md = contiguous_md(shape_of(op.input))
    log = isinstance(op, nn.LogSoftmaxOp)
    return p.softmax_pd(md, md, op.normalized_axis, b.dnnl_softmax_log if log else None)


def _choice(op: SoftmaxLike) -> tuple[str, int]:
    return remembered((op_key(op), "softmax"), lambda: _softmax_pd(op))


def softmax_accepts(op: Operation, target: Target, padding: bool) -> str | None:
    """f32, then a fast implementation."""
    assert isinstance(op, SoftmaxLike)
    if not is_f32(op):
        return NOT_F32
    implementation, _ = _choice(op)
    return None if is_fast(implementation) else f"oneDNN chose {implementation}"


def softmax_layouts(op: Operation, target: Target) -> Layouts:
    """Plain input and result."""
    return (PLAIN_LAYOUT,), (PLAIN_LAYOUT,)


def softmax_types_reason(op: Operation) -> str | None:
    """The primitive reads and writes plain data (an axis of a blocked layout is not one of
    oneDNN's dims)."""
    return NOT_F32 if not is_f32(op) else layouts_refusal(op, [(PLAIN_LAYOUT,)], [(PLAIN_LAYOUT,)])


def softmax_workspace(op: Operation, target: Target) -> int:
    assert isinstance(op, SoftmaxLike)
    return _choice(op)[1]


def softmax_compiled(op: SoftmaxLike) -> tuple[Compiled, tuple[int, ...]]:
    args = (b.DNNL_ARG_SRC,)
    compiled = p.get_compiled(
        ("softmax", op_key(op)), lambda: _softmax_pd(op), (*args, b.DNNL_ARG_DST)
    )
    return compiled, args
