"""Data movement in whatever layout operand 0 has (`"*"`): `slice_any`, `pad_any`,
`resize_any`, `channel_shuffle_any` and `concat_any` on rank-4 N, C, H, W data whose N, H and
W are whole axes and whose C is whole or in one block (NCHW, NHWC, NCHW{b}c), so that a
blocked network keeps its blocks through them.

N, H and W move as whole physical axes. Channels move as blocks where they can (a slice
starting at a block boundary with step 1 takes whole blocks), as shifted lane ranges where
a contiguous run of channels moves off the block boundary (`move_channels`: two strided
copies; ShuffleNet's halves of 116 channels, sliced and concatenated), else lane by lane
(`gather_channels`: one numpy gather over the block and lane axes, as much work as a
reorder: a channel shuffle, a slice with a step). Padding lanes of every result
are re-zeroed (a block-aligned slice ending inside a block, a gathered lane, a constant pad
with a non-zero value all put real values there otherwise). Pad pads H and W only here.
Slice and channel shuffle also move quantized (integer) data, in layouts without padding
lanes (those would have to hold the data's zero point): the NHWC of the int8 kernels.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.layout import LayoutSpec
from nnlayout.dialects.nn import ints, shape_of
from nnlayout.kernels.blocked.common import (
    any_layouts,
    any_types_reason,
    layout_spec,
    prepared,
    rezero_padding,
    sparse_operand,
)
from nnlayout.kernels.reference_movement import axis_slice, resize_along, resize_taps
from nnlayout.kernels.registry import Kernel, Target


def _nchw_layout(op: Operation, spec: LayoutSpec) -> str | None:
    """N, H and W whole; C whole or in one block."""
    if set(spec.axes) != set("NCHW"):
        return f"layout '{spec.text}' is not a layout of N, C, H and W"
    blocked = [axis for axis in "NHW" if spec.blocks_of(axis)]
    if blocked:
        return f"layout '{spec.text}' blocks axis {blocked[0]}; the kernel needs whole N, H and W"
    if len(spec.blocks_of("C")) > 1:
        return f"layout '{spec.text}' blocks C more than once"
    return None


def _unpadded_for_integers(
    check: Callable[[Operation, LayoutSpec], str | None], op: Operation, spec: LayoutSpec
) -> str | None:
    """`check`; for integer (quantized) data, a layout without padding lanes, which would
    have to hold the data's zero point, unknown here, not the 0 the kernels write there."""
    reason = check(op, spec)
    quantized = not nn.is_float_type(getattr(op.results[0].type, "element_type", None))
    if reason is None and quantized and spec.padding_elements(shape_of(op.results[0])):
        reason = f"{spec.text} pads; the padding lanes of quantized data hold its zero point"
    return reason


def _pad_layout(op: Operation, spec: LayoutSpec) -> str | None:
    return _nchw_layout(op, spec) or _channel_pad_reason(op)


def _rank_reason(op: Operation) -> str | None:
    if (reason := sparse_operand(op)) is not None:
        return reason
    rank = len(shape_of(op.operands[0]))
    return None if rank == 4 else f"rank-{rank} input; the kernel needs N, C, H, W"


def _channel_pad_reason(op: Operation) -> str | None:
    pads = ints(op.pads) if isinstance(op, nn.PadOp) else ()
    if any(pads[axis] or pads[axis + 4] for axis in (0, 1) if len(pads) == 8):
        return f"pads {list(pads)} pad the N or C axis; the kernel pads H and W only"
    return None


def _accepts(op: Operation, target: Target, padding: bool) -> str | None:
    return _rank_reason(op) or _channel_pad_reason(op)


def _axes(op: Operation) -> tuple[LayoutSpec | None, dict[str, int], int | None]:
    """The layout of operand 0, the physical position of each whole axis, and that of C's
    lanes (None when C is whole)."""
    spec = layout_spec(op.operands[0])
    if spec is None:
        return None, {axis: i for i, axis in enumerate("NCHW")}, None
    whole = {d: i for i, d in enumerate(spec.dims) if isinstance(d, str)}
    lanes = next((i for i, d in enumerate(spec.dims) if not isinstance(d, str)), None)
    return spec, whole, lanes


def _allocate(
    op: Operation,
    inputs: Sequence[np.ndarray],
    into: Callable[[Operation, Sequence[np.ndarray], np.ndarray], None],
) -> np.ndarray:
    """`into`'s result in a new array of the result's physical shape, padding re-zeroed."""
    spec = layout_spec(op.results[0])
    shape = shape_of(op.results[0])
    out = np.empty(shape if spec is None else spec.physical_shape(shape), inputs[0].dtype)
    into(op, inputs, out)
    return rezero_padding(op, out)


def gather_channels(op: Operation, x: np.ndarray, channels: np.ndarray, out: np.ndarray) -> None:
    """Writes physical `x` (laid out as operand 0 of `op`) with result channel k read from
    input channel `channels[k]` into `out`, in the same layout; padding lanes read channel 0
    (the caller re-zeroes them)."""
    spec, axes, lanes = _axes(op)
    if lanes is None:
        np.copyto(out, np.take(x, channels, axis=axes["C"]))
        return
    assert spec is not None
    block = spec.block_product("C")
    wanted = np.zeros(-(-len(channels) // block) * block, np.int64)
    wanted[: len(channels)] = channels
    grid = wanted.reshape(-1, block)
    moved = np.moveaxis(x, (axes["C"], lanes), (0, 1))[grid // block, grid % block]
    np.copyto(out, np.moveaxis(moved, (0, 1), (axes["C"], lanes)))


def move_channels(
    source: np.ndarray, first: int, count: int, target: np.ndarray, offset: int, block: int
) -> None:
    """Copies channels [first, first + count) of `source` to channels [offset, offset +
    count) of `target`, both blocked arrays viewed as [C / block, block, ...] (block and
    lane axes first), with `first` or `offset` 0. Two strided copies of whole lane ranges
    (the channel shift splits each source block between two target blocks), no gather.
    Lanes past the last channel land past `offset + count`: on the target's padding (its
    caller re-zeroes it) or on channels a later copy writes."""
    assert first == 0 or offset == 0
    shift = offset - first
    whole, lane = divmod(shift, block)
    blocks = np.arange(first // block, (first + count - 1) // block + 1)
    for lanes, source_lanes, step in (
        (slice(lane, block), slice(0, block - lane), 0),
        (slice(0, lane), slice(block - lane, block), 1),
    ):
        if lanes.start == lanes.stop:
            continue
        to = blocks + whole + step
        keep = (to >= 0) & (to < target.shape[0])
        if keep.any():
            low, high = blocks[keep][0], blocks[keep][-1] + 1
            target[to[keep][0] : to[keep][-1] + 1, lanes] = source[low:high, source_lanes]


def _slice_into(op: nn.SliceOp, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    x = inputs[0]
    spec, axes, lanes = _axes(op)
    starts, sizes, steps = ints(op.starts), ints(op.sizes), ints(op.steps)
    index: list[slice] = [slice(None)] * x.ndim
    for name in "NHW":
        axis = "NCHW".index(name)
        index[axes[name]] = axis_slice(starts[axis], sizes[axis], steps[axis])
    start, size, step = starts[1], sizes[1], steps[1]
    block = 1 if spec is None or lanes is None else spec.block_product("C")
    if step == 1 and start % block == 0:
        index[axes["C"]] = slice(start // block, -(-(start + size) // block))
        np.copyto(out, x[tuple(index)])
        return
    if step == 1 and lanes is not None:  # a shift of the lanes: two strided copies
        spatial = x[tuple(index)]
        moved = np.moveaxis(spatial, (axes["C"], lanes), (0, 1))
        target = np.moveaxis(out, (axes["C"], lanes), (0, 1))
        move_channels(moved, start, size, target, 0, block)
        return
    channels = np.arange(start, start + size * step, step)
    gather_channels(op, x[tuple(index)], channels, out)


def slice_any(op: nn.SliceOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """N, H and W sliced as physical axes; channels as whole blocks from a block boundary
    with step 1 (the lanes past the slice in its last block re-zeroed), else gathered."""
    return _allocate(op, inputs, _slice_into)


def _shuffle_into(op: nn.ChannelShuffleOp, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    x = inputs[0]
    channels = shape_of(op.input)[1]
    groups = op.groups.value.data
    _, axes, lanes = _axes(op)
    if lanes is None and axes["C"] == x.ndim - 1:  # channels last: one strided copy a group
        part = channels // groups
        for group in range(groups):
            out[..., group::groups] = x[..., group * part : (group + 1) * part]
        return
    if lanes is None:  # C whole, outer: the [groups, C / groups] transpose of whole planes
        c = axes["C"]
        before, after = x.shape[:c], x.shape[c + 1 :]
        source = x.reshape(*before, groups, channels // groups, *after).swapaxes(c, c + 1)
        if out.flags.c_contiguous:
            np.copyto(out.reshape(source.shape), source)
        else:
            np.copyto(out, source.reshape(x.shape))
        return
    order = np.arange(channels).reshape(groups, channels // groups).T.ravel()
    gather_channels(op, x, order, out)


def channel_shuffle_any(op: nn.ChannelShuffleOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Result channel j * groups + i is input channel i * (C / groups) + j."""
    return _allocate(op, inputs, _shuffle_into)


def pad_any(op: nn.PadOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """numpy's pad of the physical H and W axes; a constant's padding lanes re-zeroed."""
    x = inputs[0]
    _, axes, _ = _axes(op)
    pads = ints(op.pads)
    widths = [(0, 0)] * x.ndim
    for name in "HW":
        logical = "NCHW".index(name)
        widths[axes[name]] = (pads[logical], pads[logical + 4])
    if op.mode.data == "constant":
        value = x.dtype.type(op.value.value.data)
        return rezero_padding(op, np.pad(x, widths, constant_values=value))
    return np.pad(x, widths, mode=op.mode.data)


def resize_any(op: nn.ResizeOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The reference's taps along the physical H, then W axis (padding lanes interpolate
    zeros: they stay zero)."""
    x = inputs[0]
    _, axes, _ = _axes(op)
    result = resize_along(x, resize_taps(op, 0), axes["H"])
    return resize_along(result, resize_taps(op, 1), axes["W"]).astype(x.dtype)


def _concat_into(op: nn.ConcatOp, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    spec, axes, lanes = _axes(op)
    axis = "NCHW"[op.normalized_axis]
    if axis != "C" or lanes is None:
        np.concatenate(inputs, axis=axes[axis], out=out)
        return
    assert spec is not None
    block = spec.block_product("C")
    target = np.moveaxis(out, (axes["C"], lanes), (0, 1))  # a view: writes reach `out`
    offset = 0
    for value, x in zip(op.inputs, inputs, strict=True):  # in order: later inputs overwrite
        channels = shape_of(value)[1]
        source = np.moveaxis(x, (axes["C"], lanes), (0, 1))
        move_channels(source, 0, channels, target, offset, block)
        offset += channels


def concat_any(op: nn.ConcatOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Along N, H or W, or C whole: numpy's concatenate of the physical arrays. Along
    blocked C (channel counts off the block, which `concat_nchwc` leaves: ShuffleNet's
    halves): each input's lanes shifted to their result channels (`move_channels`);
    padding lanes re-zeroed."""
    return _allocate(op, inputs, _concat_into)


def _concat_accepts(op: Operation, target: Target, padding: bool) -> str | None:
    if (reason := _rank_reason(op)) is not None:
        return reason
    rank = len(shape_of(op.results[0]))
    return None if rank == 4 else f"rank-{rank} result; the kernel needs N, C, H, W"


def _kernel(
    op_type: type[Operation],
    impl: Callable[[Operation, Sequence[np.ndarray]], np.ndarray],
    check: Callable[[Operation, LayoutSpec], str | None] = _nchw_layout,
    into: Callable[[Operation, Sequence[np.ndarray], np.ndarray], None] | None = None,
    integer_data: bool = False,
) -> Kernel:
    """The descriptor of a kernel named after `impl`, prepared with `into` if any (writing
    straight into the destination, then re-zeroing its padding lanes); with `integer_data`,
    it also moves quantized data, in a layout without padding lanes."""
    check = functools.partial(_unpadded_for_integers, check) if integer_data else check
    return Kernel(
        impl.__name__,
        op_type,
        "blocked",
        impl,
        accepts=_concat_accepts if op_type is nn.ConcatOp else _accepts,
        layouts=any_layouts,
        accepts_layout=check,
        accepts_types=functools.partial(any_types_reason, shapes=_rank_reason, check=check),
        prepare=None if into is None else prepared(into, impl),
        integer_data=integer_data,
    )


KERNELS: tuple[Kernel, ...] = (
    _kernel(nn.SliceOp, slice_any, into=_slice_into, integer_data=True),
    _kernel(nn.PadOp, pad_any, _pad_layout),
    _kernel(nn.ResizeOp, resize_any),
    _kernel(nn.ChannelShuffleOp, channel_shuffle_any, into=_shuffle_into, integer_data=True),
    # After concat_nchwc (priority 0), where that one refuses channel counts off the block.
    replace(_kernel(nn.ConcatOp, concat_any, into=_concat_into), priority=-1),
)
