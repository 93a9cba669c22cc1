"""Max, average and global average pooling as oneDNN's pooling primitive.

ceil_mode pooling is oneDNN pooling with a larger bottom/right padding; with
count_include_pad that extra padding would count in the divisor, so that case is refused.
oneDNN's max pooling drops NaN and turns a window of -inf into the lowest float: it runs on
calls whose input is finite only (`eltwise.finite_only`).
"""

from __future__ import annotations

from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.nn import ints, shape_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import MemoryDesc


def _pool_padding_r(op: Operation) -> tuple[int, int]:
    """Bottom/right padding that fits all output windows: the explicit pads, or more where
    ceil_mode's last window overhangs them."""
    x, out = shape_of(op.operands[0]), shape_of(op.results[0])
    kernel, strides, pads, dilations = (
        ints(op.kernel),
        ints(op.strides),
        ints(op.pads),
        ints(op.dilations),
    )
    return tuple(  # type: ignore[return-value]
        max(
            pads[a + 2],
            (out[2 + a] - 1) * strides[a] + (kernel[a] - 1) * dilations[a] + 1 - x[2 + a] - pads[a],
        )
        for a in range(2)
    )


def pool_pd(op: Operation, tag: int, data_type: int = b.dnnl_f32) -> b.PrimitiveDesc:
    """The pooling primitive of `op` on data of format `tag` and type `data_type` (u8 and
    s8 for integer max pooling: quantized_eltwise.py)."""
    x, out = shape_of(op.operands[0]), shape_of(op.results[0])
    if isinstance(op, nn.GlobalAvgPoolOp):
        return p.pooling_pd(
            b.dnnl_pooling_avg_include_padding,
            MemoryDesc.with_tag(x, tag, data_type),
            MemoryDesc.with_tag(out, tag, data_type),
            x[2:],
            (1, 1),
            (1, 1),
            (0, 0),
            (0, 0),
        )
    if isinstance(op, nn.MaxPool2dOp):
        algorithm = b.dnnl_pooling_max
    elif op.count_include_pad is not None:
        algorithm = b.dnnl_pooling_avg_include_padding
    else:
        algorithm = b.dnnl_pooling_avg_exclude_padding
    return p.pooling_pd(
        algorithm,
        MemoryDesc.with_tag(x, tag, data_type),
        MemoryDesc.with_tag(out, tag, data_type),
        ints(op.kernel),
        ints(op.strides),
        ints(op.dilations),
        ints(op.pads)[:2],
        _pool_padding_r(op),
    )


def pool_reason(op: Operation) -> str | None:
    rank = len(shape_of(op.operands[0]))
    if rank != 4:
        return f"rank-{rank} input; oneDNN pooling here needs N, C, H, W"
    if (
        isinstance(op, nn.AvgPool2dOp)
        and op.count_include_pad is not None
        and (_pool_padding_r(op) != ints(op.pads)[2:])
    ):
        return "ceil_mode overhang with count_include_pad: oneDNN would count it in the divisor"
    return None
