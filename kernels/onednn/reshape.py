"""Reshape and flatten (`nn.reshape`, `nn.flatten`) as oneDNN's reorder, where `bufferize`
cannot make them views: a model's output (a CNN's pooled features flattened and returned, as
torchvision's SqueezeNet ends with either exporter), or an operand that is not one run.

A reshape keeps the row-major order of the logical elements, so its result's bytes are those
of the operand's logical dims written row-major: the reorder reads the operand's dims at its
axes' strides (row-major for plain data, the axes' places in memory for NHWC) and writes the
same dims row-major into the result's buffer. From NHWC (a returned result's operand only:
`reshape_layouts`) this is the reorder to plain and the copy in one; from plain data, a
copy. Blocked operands are refused (`unblocked_refusal`): an axis split in two has no one
stride, and `propagate-layouts` says so where it keeps the reorder before the reshape.

A reorder copies values, NaN and signed zeros included, so it runs unguarded.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import ANY_LAYOUT, PLAIN_LAYOUT
from nnlayout.dialects.layout import encoding_name, layout_of
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import MemoryDesc
from nnlayout.kernels.onednn.common import (
    NOT_F32,
    Layouts,
    axis_strides,
    contiguous_md,
    is_f32,
    is_fast,
    op_key,
    remembered,
    unblocked_refusal,
)
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.registry import BindingRefused, Target, layouts_refusal

MAX_RANK = 6
RESHAPE_OPS = (nn.ReshapeOp, nn.FlattenOp)


def _reshape_pd(op: Operation) -> b.PrimitiveDesc:
    """The operand's logical dims at its axes' strides, to the same dims row-major."""
    dims = shape_of(op.operands[0])
    strides = axis_strides(op.operands[0])
    if strides is None:  # accepts_types refused it before anything is built
        raise BindingRefused(f"{encoding_name(op.operands[0].type)} is blocked")
    return p.reorder_pd(MemoryDesc.with_strides(dims, strides), contiguous_md(dims))


def _key(op: Operation) -> tuple[object, ...]:
    return (op_key(op), encoding_name(op.operands[0].type), "reshape")


def _choice(op: Operation) -> tuple[str, int]:
    return remembered(_key(op), lambda: _reshape_pd(op))


def reshape_accepts(op: Operation, target: Target, padding: bool) -> str | None:
    """f32, an operand of rank 1 to `MAX_RANK`, not empty, then a fast implementation."""
    assert isinstance(op, RESHAPE_OPS)
    if not is_f32(op):
        return NOT_F32
    dims = shape_of(op.operands[0])
    if not 1 <= len(dims) <= MAX_RANK:
        return f"an operand of rank {len(dims)}; the oneDNN kernel takes ranks 1 to {MAX_RANK}"
    if 0 in dims:
        return "an empty operand"
    if (spec := layout_of(op.operands[0].type)) is not None and spec.is_blocked:
        return unblocked_refusal(op, spec)
    implementation, _ = _choice(op)
    return None if is_fast(implementation) else f"oneDNN chose {implementation}"


def _returned(op: Operation) -> bool:
    return any(isinstance(use.operation, func.ReturnOp) for use in op.results[0].uses)


def reshape_layouts(op: Operation, target: Target) -> Layouts:
    """The result plain. A returned result's operand in the layout it comes in (plain or
    NHWC: not blocked): the copy it needs anyway reads it there, instead of a reorder to plain
    before it. Elsewhere the operand plain, so that `bufferize` makes the reshape a view of
    it (the reorder to plain, if any, is then the only copy)."""
    return ((ANY_LAYOUT,) if _returned(op) else (PLAIN_LAYOUT,)), (PLAIN_LAYOUT,)


def reshape_types_reason(op: Operation) -> str | None:
    """f32, an operand that is not blocked, a plain result."""
    if not is_f32(op):
        return NOT_F32
    spec = layout_of(op.operands[0].type)
    if spec is not None and (reason := unblocked_refusal(op, spec)) is not None:
        return reason
    return layouts_refusal(op, [(encoding_name(op.operands[0].type),)], [(PLAIN_LAYOUT,)])


def reshape_workspace(op: Operation, target: Target) -> int:
    return _choice(op)[1]


def reshape_compiled(op: Operation) -> tuple[Compiled, tuple[int, ...]]:
    args = (b.DNNL_ARG_SRC,)
    compiled = p.get_compiled(_key(op), lambda: _reshape_pd(op), (*args, b.DNNL_ARG_DST))
    return compiled, args
