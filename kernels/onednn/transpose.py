"""Transpose (`nn.transpose`) of plain data as oneDNN's reorder: a permutation of axes is a
reorder between two strided descriptors of the result's dims, the source's strides those of
the input's axes in the result's order, the destination row-major.

A reorder copies values, NaN and signed zeros included, so it runs unguarded.
"""

from __future__ import annotations

from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import PLAIN_LAYOUT
from nnlayout.dialects.nn import ints, shape_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import MemoryDesc
from nnlayout.kernels.onednn.common import (
    NOT_F32,
    Layouts,
    contiguous_md,
    f32_rank_reason,
    is_f32,
    is_fast,
    op_key,
    remembered,
    row_major_strides,
)
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.registry import Target, layouts_refusal


def _transpose_pd(op: nn.TransposeOp) -> b.PrimitiveDesc:
    """Result dim i is input dim perm[i]: the source descriptor reads the input's bytes with
    the stride of input axis perm[i] along dim i."""
    strides = row_major_strides(shape_of(op.input))
    perm = ints(op.perm)
    output = shape_of(op.output)
    source = MemoryDesc.with_strides(output, [strides[axis] for axis in perm])
    return p.reorder_pd(source, contiguous_md(output))


def _choice(op: nn.TransposeOp) -> tuple[str, int]:
    return remembered((op_key(op), "transpose"), lambda: _transpose_pd(op))


def transpose_accepts(op: Operation, target: Target, padding: bool) -> str | None:
    """f32 of rank 1 to `MAX_RANK`, then a fast implementation."""
    assert isinstance(op, nn.TransposeOp)
    reason = f32_rank_reason(op)
    if reason is not None:
        return reason
    implementation, _ = _choice(op)
    return None if is_fast(implementation) else f"oneDNN chose {implementation}"


def transpose_layouts(op: Operation, target: Target) -> Layouts:
    """Plain input and result."""
    return (PLAIN_LAYOUT,), (PLAIN_LAYOUT,)


def transpose_types_reason(op: Operation) -> str | None:
    """The reorder reads and writes plain data (the permutation names logical axes)."""
    return NOT_F32 if not is_f32(op) else layouts_refusal(op, [(PLAIN_LAYOUT,)], [(PLAIN_LAYOUT,)])


def transpose_workspace(op: Operation, target: Target) -> int:
    assert isinstance(op, nn.TransposeOp)
    return _choice(op)[1]


def transpose_compiled(op: nn.TransposeOp) -> tuple[Compiled, tuple[int, ...]]:
    args = (b.DNNL_ARG_SRC,)
    compiled = p.get_compiled(
        ("transpose", op_key(op)), lambda: _transpose_pd(op), (*args, b.DNNL_ARG_DST)
    )
    return compiled, args
