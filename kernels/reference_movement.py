"""Reference kernels of the data-movement ops (`nn.slice`, `nn.pad`, `nn.resize`,
`nn.channel_shuffle`, `nn.expand`, `nn.gather` and its prepared form), part of the oracle
(`reference.REFERENCE_KERNELS` lists them), and the index arithmetic the other kernels of
these ops share: `slice_index` (a slice as numpy indexing) and `resize_taps` (ONNX Resize's
formulas, one spatial axis at a time).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import StringAttr

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects import nn
from nnlayout.dialects.nn import ints, shape_of
from nnlayout.kernels.registry import BindingSession, BoundKernel


def axis_slice(start: int, size: int, step: int) -> slice:
    """`size` elements from `start` by `step` as a Python slice (a negative step too)."""
    stop = start + size * step
    return slice(start, None if stop < 0 else stop, step)


def slice_index(op: nn.SliceOp) -> tuple[slice, ...]:
    """The op's window as numpy basic indexing of its logical input."""
    return tuple(
        axis_slice(start, size, step)
        for start, size, step in zip(ints(op.starts), ints(op.sizes), ints(op.steps), strict=True)
    )


def slice_(op: nn.SliceOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The strided window, copied into a row-major array."""
    return np.asarray(inputs[0][slice_index(op)], order="C")


def pad(op: nn.PadOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """numpy's pad: ONNX's constant, reflect (no edge repeat) and edge modes are numpy's."""
    x = inputs[0]
    pads = ints(op.pads)
    rank = x.ndim
    widths = [(pads[axis], pads[axis + rank]) for axis in range(rank)]
    mode = op.mode.data
    if mode == "constant":
        return np.pad(x, widths, constant_values=x.dtype.type(op.value.value.data))
    return np.pad(x, widths, mode=mode)


def source_coordinates(mode: str, size: int, out: int, scale: float) -> np.ndarray:
    """ONNX Resize's input coordinate of each of the `out` output indices along one axis
    (float64, as onnx's reference evaluator computes it), for coordinate_transformation_mode
    `mode`. The resized length in the formulas is scale * size (not rounded)."""
    y = np.arange(out, dtype=np.float64)
    length = scale * size
    if mode == "align_corners":
        return np.zeros(out) if length == 1 else y * (size - 1) / (length - 1)
    if mode == "asymmetric":
        return y / scale
    if mode == "pytorch_half_pixel":
        return np.full(out, -0.5) if length == 1 else (y + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        offset = size / 2 * (1 - out / length)
        return offset + (y + 0.5) / scale - 0.5
    return (y + 0.5) / scale - 0.5  # half_pixel


def _nearest_index(x: np.ndarray, rounding: str) -> np.ndarray:
    """ONNX's nearest_mode applied to coordinates `x` (integers map to themselves)."""
    floor = np.floor(x)
    fraction = x - floor
    if rounding == "floor":
        up = np.zeros(x.shape, bool)
    elif rounding == "ceil":
        up = fraction > 0
    elif rounding == "round_prefer_ceil":
        up = fraction >= 0.5
    else:  # round_prefer_floor
        up = fraction > 0.5
    return floor.astype(np.int64) + up


def resize_taps(op: nn.ResizeBase, axis: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Along spatial `axis` (0: H, 1: W): for each output index, the two input indices it
    reads and the weight of the second (nearest mode: both indices the same, weight 0).
    Indices outside the axis are clamped to its edge, as ONNX's edge-padded neighbours are."""
    size = shape_of(op.input)[2 + axis]
    out = shape_of(op.output)[2 + axis]
    x = source_coordinates(op.coordinates.data, size, out, op.scale_values[axis])
    if op.mode.data == "nearest":
        index = np.clip(_nearest_index(x, op.nearest.data), 0, size - 1)
        return index, index, np.zeros(out)
    left = np.floor(x)
    weight = x - left
    left = left.astype(np.int64)
    return np.clip(left, 0, size - 1), np.clip(left + 1, 0, size - 1), weight


def resize_along(
    x: np.ndarray, taps: tuple[np.ndarray, np.ndarray, np.ndarray], axis: int
) -> np.ndarray:
    """One spatial axis of `x` (physical `axis`) resized by `taps` (see `resize_taps`), in
    float64."""
    first, second, weight = taps
    shape = [1] * x.ndim
    shape[axis] = -1
    low = np.take(x, first, axis=axis).astype(np.float64)
    if not weight.any():
        return low
    high = np.take(x, second, axis=axis).astype(np.float64)
    w = weight.reshape(shape)
    return low * (1 - w) + high * w


def resize(op: nn.ResizeBase, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """ONNX Resize of H, then W, in float64 (as onnx's reference evaluator), rounded once."""
    x = inputs[0]
    result = resize_along(x, resize_taps(op, 0), 2)
    result = resize_along(result, resize_taps(op, 1), 3)
    return result.astype(x.dtype)


def channel_shuffle(op: nn.ChannelShuffleOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """[N, g, C/g, ...] -> [N, C/g, g, ...], as ShuffleNet's Reshape-Transpose-Reshape."""
    x = inputs[0]
    groups = op.groups.value.data
    n, c, *rest = x.shape
    grouped = x.reshape(n, groups, c // groups, *rest).swapaxes(1, 2)
    return np.asarray(grouped.reshape(x.shape), order="C")


def expand(op: nn.ExpandOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """numpy's broadcast to the result's shape, copied."""
    return np.array(np.broadcast_to(inputs[0], shape_of(op.output)), order="C")


def _checked_indices(op: nn.GatherOp | nn.ScatterOp, data: np.ndarray, indices: np.ndarray) -> None:
    """Raises an error at the op for an index outside -size..size-1 of the indexed axis
    (numpy's take would wrap it, or raise an IndexError that names no op)."""
    axis = op.axis.value.data
    size = data.shape[axis]
    outside = (indices < -size) | (indices >= size)
    if outside.any():
        where = tuple(int(i) for i in np.argwhere(outside)[0])
        node = op.attributes.get(nn.ONNX_NODE)
        named = f" (the indices of ONNX node '{node.data}')" if isinstance(node, StringAttr) else ""
        raise DiagnosticError(
            op,
            f"{op.name}: index {int(indices[where])} at {list(where)} of the indices is out "
            f"of range for axis {axis} of size {size} (-{size} to {size - 1}){named}",
        )


def gather(op: nn.GatherOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """data indexed along the axis by every index, a negative one counted from the end."""
    data, indices = inputs
    _checked_indices(op, data, indices)
    return np.take(data, indices, axis=op.axis.value.data, mode="wrap")


def gather_into(op: nn.GatherOp, session: BindingSession | None) -> BoundKernel:
    """`gather` written into the destination (checked indices: wrapping is then exact)."""
    axis = op.axis.value.data

    def bound(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        data, indices = inputs
        _checked_indices(op, data, indices)
        np.take(data, indices, axis=axis, out=out, mode="wrap")

    return bound


#: nn.scatter's reductions: the ufunc whose `at` combines each update with what is there.
_SCATTER_REDUCTIONS = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _scatter(op: nn.ScatterOp, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    """data into `out` (nothing to copy where the plan put the result over it), then each
    update's slice at its index, in order: a repeated index keeps the last, or, with a
    reduction, combines them all (`ufunc.at`, unbuffered)."""
    data, indices, updates = inputs
    _checked_indices(op, data, indices)
    if not np.shares_memory(out, data):
        np.copyto(out, data)
    axis = op.axis.value.data
    moved, given = np.moveaxis(out, axis, 0), np.moveaxis(updates, axis, 0)
    normal = np.where(indices < 0, indices + data.shape[axis], indices)
    if op.combined is not None:
        _SCATTER_REDUCTIONS[op.combined].at(moved, normal, given)
    elif np.unique(normal).size == normal.size:
        moved[normal] = given
    else:
        for k, index in enumerate(normal.tolist()):
            moved[index] = given[k]


def scatter(op: nn.ScatterOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """data with its slices along the axis at the indices replaced by the updates'."""
    out = np.empty_like(inputs[0])
    _scatter(op, inputs, out)
    return out


def scatter_into(op: nn.ScatterOp, session: BindingSession | None) -> BoundKernel:
    """`scatter` written into the destination, which may be data's own buffer."""
    return lambda inputs, out: _scatter(op, inputs, out)
