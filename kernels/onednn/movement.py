"""Resize and channel shuffle as oneDNN's resampling and shuffle primitives, in whatever format
their operand has (`any_layout`'s `"*"` rules call `movement_pd` and `movement_reason`).

oneDNN's resampling knows one coordinate transform, with the factor F = OH / IH of the
buffers' sizes (cpu/resampling_utils.hpp, float arithmetic): nearest reads input index
floor((y + 0.5) / F), linear interpolates at (y + 0.5) / F - 0.5 between its floor and ceil,
clamped to the axis. An ONNX resize takes this kernel only where that gives ONNX's taps: the
indices it reads and, for linear, its weights within 1e-5 (`_taps_differ` compares them along
each axis): half_pixel linear with sizes or exact scales; nearest with half_pixel and
round_prefer_ceil, or any mode whose rounding never meets a tie, as asymmetric floor
upsampling by whole factors. Other modes (align_corners, asymmetric
linear) stay with the reference kernel, with the reason.

oneDNN's shuffle with group size G views the channel axis as a [G, C / G] matrix, transposed;
ShuffleNet's shuffle of `groups` groups is the one with G = C / groups. oneDNN runs it fast
(jit) on nChw8c and nChw16c only, so its kernel declares the target's blocked format
(`shuffle_layouts`) where the target asks oneDNN for one. Where it asks for none, plain or NHWC
data is shuffled by oneDNN's reorder between strided descriptors (`channel_shuffle_reorder_onednn`:
the channels seen as a [groups, C / groups] matrix read transposed), as transposes are
(transpose.py); so is quantized u8 or s8 data, in the NHWC the int8 kernels keep.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import ANY_LAYOUT, PLAIN_LAYOUT
from nnlayout.dialects.layout import LayoutSpec, encoding_name, layout_of
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import MemoryDesc
from nnlayout.kernels.onednn.common import (
    NOT_F32,
    Layouts,
    axis_strides,
    is_f32,
    is_fast,
    moved_data_type,
    op_key,
    remembered,
    unblocked_refusal,
)
from nnlayout.kernels.onednn.formats import by_layout
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.onednn.target_options import OneDNNOptions
from nnlayout.kernels.reference_movement import resize_taps
from nnlayout.kernels.registry import BindingRefused, Target, one_layout_refusal

MOVEMENT_OPS = (nn.ResizeOp, nn.ChannelShuffleOp)  # built by movement_pd
WEIGHT_TOLERANCE = 1e-5


def _onednn_taps(size: int, out: int, linear: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The input indices and second weight oneDNN's resampling uses along one axis."""
    y = np.arange(out, dtype=np.float32)
    factor = np.float32(out) / np.float32(size)
    if not linear:
        index = np.minimum(
            ((y + np.float32(0.5)) * (np.float32(1) / factor)).astype(np.int64), size - 1
        )
        return index, index, np.zeros(out)
    s = (y + np.float32(0.5)) * (np.float32(1) / factor) - np.float32(0.5)
    left = np.maximum(np.floor(s), 0).astype(np.int64)
    right = np.minimum(np.ceil(np.maximum(s, 0)), size - 1).astype(np.int64)
    return np.minimum(left, size - 1), right, np.abs(s - left).astype(np.float64)


def _normalised(taps: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[np.ndarray, ...]:
    """Taps with what does not change the result made equal: a weight 0 or 1 reads one index,
    and two equal indices need no weight."""
    first, second, weight = taps
    first = np.where(weight >= 1 - WEIGHT_TOLERANCE, second, first)
    second = np.where(weight <= WEIGHT_TOLERANCE, first, second)
    weight = np.where(first == second, 0.0, weight)
    return first, second, weight


def _taps_differ(op: nn.ResizeBase, axis: int) -> bool:
    size = shape_of(op.input)[2 + axis]
    out = shape_of(op.output)[2 + axis]
    ours = _normalised(resize_taps(op, axis))
    theirs = _normalised(_onednn_taps(size, out, op.mode.data == "linear"))
    return not (
        np.array_equal(ours[0], theirs[0])
        and np.array_equal(ours[1], theirs[1])
        and np.allclose(ours[2], theirs[2], rtol=0, atol=WEIGHT_TOLERANCE)
    )


def movement_reason(op: Operation) -> str | None:
    """Why oneDNN's primitive would not compute `op` as the reference does."""
    if isinstance(op, nn.ChannelShuffleOp):
        return None
    assert isinstance(op, nn.ResizeBase)
    for axis, name in enumerate(("height", "width")):
        if _taps_differ(op, axis):
            return (
                f"{op.mode.data} resize with coordinates {op.coordinates.data} "
                f"(nearest {op.nearest.data}, scale {op.scale_values[axis]:g}) reads other "
                f"input positions along the {name} than oneDNN's resampling, which maps output "
                "y to (y + 0.5) * IH / OH - 0.5"
            )
    return None


def movement_pd(op: Operation, tag: int) -> b.PrimitiveDesc:
    src = MemoryDesc.with_tag(shape_of(op.operands[0]), tag)
    dst = MemoryDesc.with_tag(shape_of(op.results[0]), tag)
    if isinstance(op, nn.ChannelShuffleOp):
        channels = shape_of(op.input)[1]
        return p.shuffle_pd(src, dst, 1, channels // op.groups.value.data)
    assert isinstance(op, nn.ResizeOp)
    linear = op.mode.data == "linear"
    algorithm = b.dnnl_resampling_linear if linear else b.dnnl_resampling_nearest
    return p.resampling_pd(algorithm, src, dst)


# ------------------------------------------------------------- channel shuffle, blocked
def _shuffle_layout(target: Target) -> str | None:
    """The channel-blocked activation format the target asks oneDNN for, if any."""
    layout = OneDNNOptions.of(target).data_format
    return layout if layout in ("NCHW8c", "NCHW16c") else None


def blocked_activations(target: Target) -> bool:
    """Whether oneDNN's convolutions keep the target's activations channel-blocked: it asks
    for nChw8c, or for nChw16c where oneDNN runs its avx512_core code."""
    layout = _shuffle_layout(target)
    return layout is not None and (layout == "NCHW8c" or b.runs_avx512_core())


def shuffle_accepts(op: Operation, target: Target, padding: bool) -> str | None:
    """oneDNN's shuffle is fast (jit) on nChw8c and nChw16c data only, so the kernel asks for
    the target's blocked format, where the convolutions around it keep their data."""
    if not is_f32(op):
        return NOT_F32
    if len(shape_of(op.operands[0])) != 4:
        return "not rank 4; the oneDNN kernel needs N, C, H, W"
    layout = _shuffle_layout(target)
    if layout is None:
        return (
            "the target asks oneDNN for no channel-blocked activation format, and oneDNN's "
            "shuffle is fast on nChw8c and nChw16c only"
        )
    if layout == "NCHW16c" and not b.runs_avx512_core():
        return (
            "oneDNN's convolutions run nChw16c fast with its avx512_core code only, which "
            "it does not run here: the data around the shuffle would not be nChw16c"
        )
    block = LayoutSpec.parse(layout).block_product("C")
    channels = shape_of(op.operands[0])[1]
    if channels % block and not padding:
        return f"{channels} channels are not a multiple of the block {block} and padding is off"
    fmt = by_layout("data", layout)
    assert fmt is not None
    implementation, _ = remembered((op_key(op), fmt.value), lambda: movement_pd(op, fmt.value))
    return None if is_fast(implementation) else f"oneDNN chose {implementation} for {fmt.tag}"


def shuffle_layouts(op: Operation, target: Target) -> Layouts:
    """The target's blocked activation format (NCHW8c or NCHW16c), else plain."""
    layout = _shuffle_layout(target) or PLAIN_LAYOUT
    return (layout,), (layout,)


def shuffle_types_reason(op: Operation) -> str | None:
    """Operand and result in one channel-blocked format of oneDNN's."""
    layout = encoding_name(op.operands[0].type)
    if layout not in ("NCHW8c", "NCHW16c"):
        return f"operand 0 is {layout or 'plain'}; the kernel takes NCHW8c or NCHW16c"
    return one_layout_refusal(op, [0])


# ------------------------------------------------------------- channel shuffle, plain
def _shuffle_reorder_pd(op: nn.ChannelShuffleOp) -> b.PrimitiveDesc:
    """Result channel j * groups + i is input channel i * (C / groups) + j: both seen as
    [N, C / groups (j), groups (i), rest], at the input's strides (i steps C / groups
    channels) and the result's (j steps `groups` channels)."""
    n, channels, *rest = shape_of(op.input)
    groups = op.groups.value.data
    dims = (n, channels // groups, groups, *rest)
    x, y = axis_strides(op.input), axis_strides(op.output)
    if x is None or y is None:  # accepts_types refused it before anything is built
        raise BindingRefused("a blocked layout")
    data_type = moved_data_type(op) or b.dnnl_f32
    return p.reorder_pd(
        MemoryDesc.with_strides(dims, (x[0], x[1], channels // groups * x[1], *x[2:]), data_type),
        MemoryDesc.with_strides(dims, (y[0], groups * y[1], y[1], *y[2:]), data_type),
    )


def _shuffle_reorder_key(op: nn.ChannelShuffleOp) -> tuple[object, ...]:
    return (op_key(op), encoding_name(op.input.type), "shuffle reorder")


def _shuffle_reorder_choice(op: nn.ChannelShuffleOp) -> tuple[str, int]:
    return remembered(_shuffle_reorder_key(op), lambda: _shuffle_reorder_pd(op))


def shuffle_reorder_accepts(op: Operation, target: Target, padding: bool) -> str | None:
    """Where the target asks oneDNN for no channel-blocked format (`shuffle_accepts` then
    refuses), plain data shuffled by a reorder between strided descriptors; elsewhere the
    data stays blocked around the shuffle. Quantized (u8, s8) data, which the int8 kernels
    keep NHWC, always."""
    assert isinstance(op, nn.ChannelShuffleOp)
    data_type = moved_data_type(op)
    if data_type is None:
        return "not f32, u8 or s8 throughout"
    if data_type == b.dnnl_f32 and blocked_activations(target):
        return "the target's data is channel-blocked: the shuffle runs in that layout"
    implementation, _ = _shuffle_reorder_choice(op)
    return None if is_fast(implementation) else f"oneDNN chose {implementation}"


def strided_reorder_layouts(op: Operation, target: Target) -> Layouts:
    """Operand 0's layout as it comes, for the result too (a reorder between strided
    descriptors: the plain shuffle here, slicing.py's slice)."""
    return (ANY_LAYOUT,), (ANY_LAYOUT,)


def strided_reorder_types_reason(op: Operation) -> str | None:
    """The reorder reads and writes operand 0's layout, which is not blocked; f32 (a shuffle
    also u8 or s8)."""
    if not is_f32(op) and not (isinstance(op, nn.ChannelShuffleOp) and moved_data_type(op)):
        return NOT_F32
    spec = layout_of(op.operands[0].type)
    return (None if spec is None else unblocked_refusal(op, spec)) or one_layout_refusal(op, [0])


def shuffle_reorder_workspace(op: Operation, target: Target) -> int:
    assert isinstance(op, nn.ChannelShuffleOp)
    return _shuffle_reorder_choice(op)[1]


def shuffle_reorder_compiled(op: nn.ChannelShuffleOp) -> tuple[Compiled, tuple[int, ...]]:
    args = (b.DNNL_ARG_SRC,)
    compiled = p.get_compiled(
        _shuffle_reorder_key(op),
        lambda: _shuffle_reorder_pd(op),
        (*args, b.DNNL_ARG_DST),
    )
    return compiled, args


def shuffle_workspace(op: Operation, target: Target) -> int:
    layout = _shuffle_layout(target)
    fmt = None if layout is None else by_layout("data", layout)
    if fmt is None:
        return 0
    return remembered((op_key(op), fmt.value), lambda: movement_pd(op, fmt.value))[1]
