"""Ops in their operand's layout (`"*"`): pooling, element-wise, binary, prelu, batch norm and
concat as oneDNN primitives on whatever format operand 0 has, as long as oneDNN has a fast
implementation for it (dispatch leaves the op plain until propagate-layouts offers another
layout; hand-written IR may already give it one).

Our formats name 4-D data only; element-wise, binary and concat ops also run on plain data of
another rank (a transformer's [N, T, D] tokens, its [1, 1, D] bias after extend-ranks, ViT's
class token joined to the patches), described to oneDNN by row-major strides.
"""

from __future__ import annotations

from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import ANY_LAYOUT, PLAIN_LAYOUT
from nnlayout.dialects.layout import LayoutSpec, encoding_name
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.blocked import broadcast_reason
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import MemoryDesc
from nnlayout.kernels.onednn.collapsed import collapsed_shapes
from nnlayout.kernels.onednn.common import (
    NOT_F32,
    Layouts,
    contiguous_md,
    data_type,
    float_refusal,
    format_of,
    is_f32,
    is_fast,
    op_key,
    rank_reason,
    remembered,
)
from nnlayout.kernels.onednn.eltwise import (
    BINARY,
    ELTWISE_OPS,
    binary_order,
    binary_reason,
    eltwise_params,
)
from nnlayout.kernels.onednn.formats import FORMATS, Format, by_layout
from nnlayout.kernels.onednn.movement import MOVEMENT_OPS, movement_pd, movement_reason
from nnlayout.kernels.onednn.pooling import pool_pd, pool_reason
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.onednn.target_options import OneDNNOptions
from nnlayout.kernels.registry import Target, one_layout_refusal

# The ops that run on plain data of any rank oneDNN takes (1 to `MAX_RANK`), not only 4-D.
ANY_RANK: tuple[type[Operation], ...] = (
    *BINARY,
    *ELTWISE_OPS,
    nn.ReluOp,
    nn.ClipOp,
    nn.LeakyReluOp,
    nn.ConcatOp,
)
PLAIN_DATA = FORMATS[0]  # nchw: for data of another rank, row-major


# The ops whose oneDNN primitives take bf16 data here (f32 math inside, the result rounded
# once, as the reference kernels compute bf16): a prelu's slopes and the movement
# primitives' descriptors are f32 only. A batch norm's scale, shift, mean and variance are
# f32 in oneDNN: its bf16 twin's vectors (bf16, as an `nn` op has one element type) are
# widened to f32 (exactly) on the way in: once for a call bound to its arrays (`on`),
# on each call otherwise (`calls.OpRun.arrays`).
BF16_OPS: tuple[type[Operation], ...] = (
    *BINARY,
    *ELTWISE_OPS,
    nn.ReluOp,
    nn.ClipOp,
    nn.LeakyReluOp,
    nn.ConcatOp,
    nn.MaxPool2dOp,
    nn.AvgPool2dOp,
    nn.GlobalAvgPoolOp,
    nn.BatchNormOp,
)


def _data_md(shape: tuple[int, ...], tag: int, data_type: int = b.dnnl_f32) -> MemoryDesc:
    """The descriptor of operand data of `shape` in format `tag`: row-major where the data is
    not 4-D (`_any_choice` lets only the plain format through there)."""
    if len(shape) == 4:
        return MemoryDesc.with_tag(shape, tag, data_type)
    return contiguous_md(shape, data_type)


def _any_pd(op: Operation, tag: int) -> b.PrimitiveDesc:
    """The primitive descriptor of a `"*"` op whose operands all have format `tag`."""
    t = data_type(op.results[0])
    if isinstance(op, nn.Pool2dOp | nn.GlobalAvgPoolOp):
        return pool_pd(op, tag, t)
    if isinstance(op, MOVEMENT_OPS):
        return movement_pd(op, tag)
    md = [_data_md(shape_of(op.operands[i]), tag, t) for i in _data_operands(op)]
    out = _data_md(shape_of(op.results[0]), tag, t)
    if type(op) in BINARY:
        first, second = binary_order(op)
        pd = p.binary_pd(BINARY[type(op)], md[first], md[second], out)
        if tag != PLAIN_DATA.value or is_fast(pd.implementation):
            return pd
        return _collapsed_binary_pd(op, first, second) or pd
    if isinstance(op, nn.PReluOp):
        return p.prelu_pd(md[0], md[1], out)
    if isinstance(op, nn.BatchNormOp):
        return p.batch_norm_pd(md[0], out, op.epsilon.value.data)
    if isinstance(op, nn.ConcatOp):
        return p.concat_pd(out, op.normalized_axis, md)
    algorithm, alpha, beta = eltwise_params(op)
    return p.eltwise_pd(algorithm, md[0], out, alpha, beta)


def _collapsed_binary_pd(op: Operation, first: int, second: int) -> b.PrimitiveDesc | None:
    """A plain binary op's primitive on its axes merged where they broadcast alike
    (collapsed.py), where oneDNN runs that in fast code; None where it does not."""
    out, (a, c) = collapsed_shapes(
        shape_of(op.results[0]), [shape_of(op.operands[first]), shape_of(op.operands[second])]
    )
    pd = p.binary_pd(BINARY[type(op)], contiguous_md(a), contiguous_md(c), contiguous_md(out))
    return pd if is_fast(pd.implementation) else None


def _data_operands(op: Operation) -> range:
    """The operands a `"*"` op reads in its format: all but a batch norm's vectors."""
    return range(1 if isinstance(op, nn.BatchNormOp) else len(op.operands))


def any_types_reason(op: Operation) -> str | None:
    """`_any_shape_reason`; the primitive reads every data operand, and writes the result,
    in operand 0's format."""
    return _any_shape_reason(op) or one_layout_refusal(op, _data_operands(op))


def _any_args(op: Operation) -> tuple[int, ...]:
    """oneDNN's execution argument for each operand."""
    if isinstance(op, nn.BatchNormOp):
        return (
            b.DNNL_ARG_SRC,
            b.DNNL_ARG_SCALE,
            b.DNNL_ARG_SHIFT,
            b.DNNL_ARG_MEAN,
            b.DNNL_ARG_VARIANCE,
        )
    if isinstance(op, nn.ConcatOp):
        return tuple(b.DNNL_ARG_MULTIPLE_SRC + i for i in range(len(op.operands)))
    if isinstance(op, nn.PReluOp):
        return (b.DNNL_ARG_SRC, b.DNNL_ARG_WEIGHTS)
    if type(op) in BINARY:
        first, _ = binary_order(op)
        return (
            (b.DNNL_ARG_SRC, b.DNNL_ARG_SRC_1) if first == 0 else (b.DNNL_ARG_SRC_1, b.DNNL_ARG_SRC)
        )
    return (b.DNNL_ARG_SRC,)


def _any_choice(op: Operation, tag: int, key: tuple[object, ...] | None = None) -> tuple[str, int]:
    """oneDNN's implementation of `op` on data of format `tag` and its scratchpad bytes
    (`key`: `op_key(op)`, when the caller asks for several formats)."""
    rank = len(shape_of(op.results[0]))
    if rank != 4 and tag != PLAIN_DATA.value:
        return (f"none (rank-{rank} data is plain only)", 0)
    return remembered((op_key(op) if key is None else key, tag), lambda: _any_pd(op, tag))


def _any_reason(op: Operation, fmt: Format | None, layout: str) -> str | None:
    """Why `op` cannot run in `layout` (None when oneDNN has a fast implementation)."""
    if fmt is None:
        return f"layout '{layout}' has no oneDNN format"
    implementation, _ = _any_choice(op, fmt.value)
    if not is_fast(implementation):
        return f"oneDNN chose {implementation} for {fmt.tag} data"
    return None


def any_workspace(op: Operation, target: Target) -> int:
    """The largest scratchpad among the data formats the op may arrive in (its layout is
    only known after propagate-layouts), so that a planner's buffer always suffices."""
    key = op_key(op)
    choices = [_any_choice(op, f.value, key) for f in FORMATS if f.role == "data"]
    return max((scratchpad for name, scratchpad in choices if is_fast(name)), default=0)


def any_accepts(op: Operation, target: Target, padding: bool) -> str | None:
    """Shape rules, then a fast implementation for operand 0's data as it is: plain nchw
    (where dispatch leaves the op until propagate-layouts offers another layout), or a
    layout hand-written IR already gives it (NCHW4c2c has no oneDNN format: running the
    kernel was an internal error)."""
    layout = encoding_name(op.operands[0].type)
    return (
        _any_shape_reason(op)
        or _any_reason(op, by_layout("data", layout), layout or "NCHW")
        or _blocked_concat_reason(op, target)
    )


def _blocked_concat_reason(op: Operation, target: Target) -> str | None:
    """A concat on a target asking oneDNN for blocked activations meets them: where oneDNN
    has no fast concat of these inputs in that format (channel counts off the block,
    ShuffleNet's halves), the blocked family's concat_any joins them in it instead."""
    layout = OneDNNOptions.of(target).data_format
    if (
        not isinstance(op, nn.ConcatOp)
        or layout not in ("NCHW8c", "NCHW16c")
        or len(shape_of(op.output)) != 4
    ):
        return None  # data of another rank is plain: the blocked formats are 4-D
    return _any_reason(op, by_layout("data", layout), layout)


def _any_shape_reason(op: Operation) -> str | None:
    """Why oneDNN's primitive would not compute `op` as the reference does (None when it
    does): element type, rank, pooling geometry, broadcasting."""
    if not is_f32(op):
        if not isinstance(op, BF16_OPS):
            return NOT_F32
        if (reason := float_refusal(op)) is not None:
            return reason
    if isinstance(op, nn.Pool2dOp | nn.GlobalAvgPoolOp):
        return pool_reason(op)
    if isinstance(op, ANY_RANK):
        if (reason := rank_reason(op)) is not None:
            return reason
    elif len(shape_of(op.results[0])) != 4:  # our formats name 4-D data only
        return "not rank 4; the oneDNN kernel needs N, C, H, W"
    if type(op) in BINARY:
        return binary_reason(op)
    if isinstance(op, MOVEMENT_OPS):
        return movement_reason(op)
    if isinstance(op, nn.PReluOp):
        return broadcast_reason(op)
    return None


def any_accepts_layout(op: Operation, spec: LayoutSpec) -> str | None:
    return _any_reason(op, by_layout("data", spec.text), spec.text)


def any_layouts(op: Operation, target: Target) -> Layouts:
    """Operand 0 and the result in any layout; batch norm's vectors plain."""
    if isinstance(op, nn.BatchNormOp):
        return (ANY_LAYOUT,) + (PLAIN_LAYOUT,) * 4, (ANY_LAYOUT,)
    return (ANY_LAYOUT,) * len(op.operands), (ANY_LAYOUT,)


def any_compiled(op: Operation) -> tuple[Compiled, tuple[int, ...]]:
    tag = format_of(op.operands[0], "data").value
    args = _any_args(op)
    compiled = p.get_compiled(
        ("any", op_key(op), tag), lambda: _any_pd(op, tag), (*args, b.DNNL_ARG_DST)
    )
    return compiled, args
