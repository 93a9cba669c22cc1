"""Transpose (`nn.transpose`) as oneDNN's reorder: a permutation of axes is a reorder between
two strided descriptors of the result's dims, the source's strides those of the input's axes
in the result's order, the destination row-major.

The input may carry any layout that only orders its axes (NHWC: `axis_strides`), not only
plain data: the source descriptor then reads the layout's bytes directly. ConvNeXt's
`LayerNorm2d` transposes a convolution's NHWC result to [N, H, W, C] for a layer norm over
the channels; with the input taken as it comes (`"*"`), `propagate-layouts` drops the reorder
NHWC -> plain before the transpose, which then copies bytes already in the result's order.
The result stays plain (the layer norm after it reads plain data). Blocked inputs are
refused: a split axis has no one stride.

A reorder copies values, NaN and signed zeros included, so it runs unguarded; u8 and s8 data
(a quantized transformer's attention heads) it moves as it moves f32.
"""

from __future__ import annotations

from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import ANY_LAYOUT, PLAIN_LAYOUT
from nnlayout.dialects.layout import encoding_name, layout_of
from nnlayout.dialects.nn import ints, shape_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import MemoryDesc
from nnlayout.kernels.onednn.common import (
    Layouts,
    axis_strides,
    contiguous_md,
    is_fast,
    moved_data_type,
    op_key,
    rank_reason,
    remembered,
    unblocked_refusal,
)
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.registry import BindingRefused, Target


def _transpose_pd(op: nn.TransposeOp) -> b.PrimitiveDesc:
    """Result dim i is input dim perm[i]: the source descriptor reads the input's bytes with
    the stride of input axis perm[i] along dim i."""
    strides = axis_strides(op.input)
    if strides is None:  # accepts_types refused it before anything is built
        raise BindingRefused(f"{encoding_name(op.input.type)} is blocked")
    perm = ints(op.perm)
    output = shape_of(op.output)
    data_type = moved_data_type(op) or b.dnnl_f32
    source = MemoryDesc.with_strides(output, [strides[axis] for axis in perm], data_type)
    return p.reorder_pd(source, contiguous_md(output, data_type))


def _key(op: Operation) -> tuple[object, ...]:
    return ("transpose", op_key(op), encoding_name(op.operands[0].type))


def _choice(op: nn.TransposeOp) -> tuple[str, int]:
    return remembered(_key(op), lambda: _transpose_pd(op))


def _data_reason(op: Operation) -> str | None:
    """f32, u8 or s8 throughout (a reorder moves them alike), of rank 1 to `MAX_RANK`."""
    if moved_data_type(op) is None:
        return "not f32, u8 or s8 throughout"
    return rank_reason(op)


def transpose_accepts(op: Operation, target: Target, padding: bool) -> str | None:
    """f32, u8 or s8 of rank 1 to `MAX_RANK`, then a fast implementation."""
    assert isinstance(op, nn.TransposeOp)
    reason = _data_reason(op)
    if reason is not None:
        return reason
    implementation, _ = _choice(op)
    return None if is_fast(implementation) else f"oneDNN chose {implementation}"


def transpose_layouts(op: Operation, target: Target) -> Layouts:
    """The input in the layout it comes in unless that is blocked (NHWC or plain), the result
    plain."""
    return (ANY_LAYOUT,), (PLAIN_LAYOUT,)


def transpose_types_reason(op: Operation) -> str | None:
    """The reorder reads its input in a layout that only orders the axes (or plain) and
    writes plain data (the permutation names logical axes)."""
    reason = _data_reason(op)
    if reason is not None:
        return reason
    spec = layout_of(op.operands[0].type)
    if spec is not None and (reason := unblocked_refusal(op, spec)) is not None:
        return f"operand 0: {reason}"
    if (name := encoding_name(op.results[0].type)) != PLAIN_LAYOUT:
        return f"result 0 is {name}; the kernel writes it plain"
    return None


def transpose_workspace(op: Operation, target: Target) -> int:
    assert isinstance(op, nn.TransposeOp)
    return _choice(op)[1]


def transpose_compiled(op: nn.TransposeOp) -> tuple[Compiled, tuple[int, ...]]:
    args = (b.DNNL_ARG_SRC,)
    compiled = p.get_compiled(_key(op), lambda: _transpose_pd(op), (*args, b.DNNL_ARG_DST))
    return compiled, args
