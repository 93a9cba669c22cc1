"""Transpose (`nn.transpose`) as oneDNN's reorder: a permutation of axes is a reorder between
two strided descriptors of the result's dims, the source's strides those of the input's axes
in the result's order, the destination row-major.

The input may carry any layout that only orders its axes (NHWC: `axis_strides`), not only
plain data: the source descriptor then reads the layout's bytes directly. ConvNeXt's
`LayerNorm2d` transposes a convolution's NHWC result to [N, H, W, C] for a layer norm over
the channels; with the input taken as it comes (`"*"`), `propagate-layouts` drops the reorder
NHWC -> plain before the transpose, which then copies bytes already in the result's order.
The result is plain, or in a layout that only orders its axes where `propagate-layouts`
gave it one (`orders_result`): ConvNeXt's permute of that plain [N, H, W, C] back to
[N, C, H, W], written in NHWC, has its operand's bytes (a view, once bufferized; this
kernel runs it only where the operand's buffer is not one run). Blocked inputs and results
are refused: a split axis has no one stride.

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
    strides, written = axis_strides(op.input), axis_strides(op.output)
    if strides is None or written is None:  # accepts_types refused it before anything is built
        raise BindingRefused("a blocked operand or result")
    perm = ints(op.perm)
    output = shape_of(op.output)
    data_type = moved_data_type(op) or b.dnnl_f32
    source = MemoryDesc.with_strides(output, [strides[axis] for axis in perm], data_type)
    return p.reorder_pd(source, MemoryDesc.with_strides(output, written, data_type))


def _key(op: Operation) -> tuple[object, ...]:
    return ("transpose", op_key(op), encoding_name(op.input.type), encoding_name(op.output.type))


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
    """The reorder reads its input and writes its result in layouts that only order the axes
    (or plain)."""
    reason = _data_reason(op)
    if reason is not None:
        return reason
    for what, value in (("operand 0", op.operands[0]), ("result 0", op.results[0])):
        spec = layout_of(value.type)
        if spec is not None and (reason := unblocked_refusal(op, spec)) is not None:
            return f"{what}: {reason}"
    return None


def transpose_workspace(op: Operation, target: Target) -> int:
    assert isinstance(op, nn.TransposeOp)
    return _choice(op)[1]


def transpose_compiled(op: nn.TransposeOp) -> tuple[Compiled, tuple[int, ...]]:
    args = (b.DNNL_ARG_SRC,)
    compiled = p.get_compiled(_key(op), lambda: _transpose_pd(op), (*args, b.DNNL_ARG_DST))
    return compiled, args
