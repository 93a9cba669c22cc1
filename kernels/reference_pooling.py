"""Window helpers of the reference kernels (the padded input, its sliding windows, the
ceil_mode overhang) and the reference kernels of `nn.max_pool2d`, `nn.max_pool2d_indices`
and `nn.avg_pool2d`: what the float, integer and quantized reference kernels share
(reference.py, reference_quantized.py)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from nnlayout.dialects import nn
from nnlayout.dialects.nn import ints, shape_of


def pad_spatial(
    x: np.ndarray, pads: Sequence[int], value: float, extra: Sequence[int] = (0, 0)
) -> np.ndarray:
    """Pads the H and W axes of NCHW `x` by pads = [top, left, bottom, right], plus `extra`
    more rows/columns at the bottom/right end."""
    top, left, bottom, right = pads
    widths = ((0, 0), (0, 0), (top, bottom + extra[0]), (left, right + extra[1]))
    if not any(before or after for before, after in widths):
        return x
    return np.pad(x, widths, constant_values=value)


def windows(
    x: np.ndarray,
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    out_hw: Sequence[int],
) -> np.ndarray:
    """A read-only view [N, C, OH, OW, kH, kW] of padded NCHW `x`: element (oh, ow, i, j) is
    x[..., oh * stride_h + i * dilation_h, ow * stride_w + j * dilation_w]."""
    extent = [(k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=True)]
    view = sliding_window_view(x, extent, axis=(2, 3))
    (sh, sw), (dh, dw), (oh, ow) = strides, dilations, out_hw
    return view[:, :, : (oh - 1) * sh + 1 : sh, : (ow - 1) * sw + 1 : sw, ::dh, ::dw]


def overhang(
    size: int, pads: Sequence[int], axis: int, out: int, kernel: int, stride: int, dilation: int
) -> int:
    """How far the last window (ceil_mode) reaches past the padded end of spatial `axis`."""
    padded = size + pads[axis] + pads[axis + 2]
    return max(0, (out - 1) * stride + (kernel - 1) * dilation + 1 - padded)


# --------------------------------------------------------------------- pooling
def _pool_geometry(
    op: nn.Pool2dOp, x: np.ndarray
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, int]]:
    """(kernel, strides, pads, dilations, ceil_mode overhang per spatial axis)."""
    kernel, strides, pads, dilations = (
        ints(op.kernel),
        ints(op.strides),
        ints(op.pads),
        ints(op.dilations),
    )
    out = shape_of(op.output)[2:]
    reach = tuple(
        overhang(x.shape[2 + a], pads, a, out[a], kernel[a], strides[a], dilations[a])
        for a in range(2)
    )
    return kernel, strides, pads, dilations, (reach[0], reach[1])


def max_pool2d(op: nn.MaxPool2dOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Padding (and the ceil_mode overhang) is -inf, so it never wins (for integer data:
    its type's minimum)."""
    x = inputs[0]
    kernel, strides, pads, dilations, reach = _pool_geometry(op, x)
    # The lowest value of x's type for integer (quantized) data, exact for it too.
    lowest = np.iinfo(x.dtype).min if x.dtype.kind in "iu" else -np.inf
    padded = pad_spatial(x, pads, lowest, reach)
    taps = windows(padded, kernel, strides, dilations, shape_of(op.output)[2:])
    return taps.max(axis=(-2, -1))


def max_pool2d_indices(op: nn.MaxPool2dIndicesOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The flat index of each window's maximum as onnxruntime's MaxPool finds it: its first
    element of x is the candidate, and each later one that is strictly greater takes over
    (in row-major order), so the first of equal maxima wins, padding never does, and NaN
    only as the first element. Computed in float64 (exact for every input type), NaN as
    -inf and the padding (and ceil_mode overhang) as NaN, which `nanargmax` skips; every
    window holds an element of x."""
    x = inputs[0]
    n, c, h, w = x.shape
    kernel, strides, pads, dilations, reach = _pool_geometry(op, x)
    out_hw = shape_of(op.output)[2:]
    nan = np.isnan(x) if x.dtype.kind == "f" else np.zeros(x.shape, bool)
    values = np.where(nan, -np.inf, x).astype(np.float64)
    rows, columns = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    plane = rows + columns * h if op.column_major is not None else rows * w + columns
    size = kernel[0] * kernel[1]

    def taps(array: np.ndarray, pad: float) -> np.ndarray:
        padded = pad_spatial(array, pads, pad, reach)
        view = windows(padded, kernel, strides, dilations, out_hw)
        return view.reshape(*view.shape[:2], *out_hw, size)

    where = taps(plane[None, None].astype(np.float64), -1.0)
    best = np.nanargmax(taps(values, np.nan), axis=-1)
    first = np.broadcast_to(np.argmax(where >= 0, axis=-1), best.shape)
    first_is_nan = np.take_along_axis(taps(nan, False), first[..., None], -1)[..., 0]
    chosen = np.where(first_is_nan, first, best)
    local = np.take_along_axis(np.broadcast_to(where, (n, c, *out_hw, size)), chosen[..., None], -1)
    planes = np.arange(n * c, dtype=np.int64).reshape(n, c, 1, 1) * (h * w)
    return planes + local[..., 0].astype(np.int64)


def avg_pool2d(op: nn.AvgPool2dOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The sum of the positions that count divided by their number, as ONNX's AveragePool
    and its reference evaluator compute it: input positions only, or also the explicit pads
    (zeros) with count_include_pad; the ceil_mode overhang past the padded end never counts
    (as in ONNX and PyTorch). Each window's counted values are summed in row-major order as
    one contiguous run (numpy's pairwise sum, as the evaluator's `np.average`), so that float
    results round as the evaluator's do, halfway cases of a quantized average included."""
    x = inputs[0]
    kernel, strides, pads, dilations, reach = _pool_geometry(op, x)
    out_hw = shape_of(op.output)[2:]
    padded = pad_spatial(x, pads, 0.0, reach)
    taps = windows(padded, kernel, strides, dilations, out_hw)
    counted = np.zeros((1, 1) + padded.shape[2:], dtype=bool)
    if op.count_include_pad is None:
        top, left = pads[0], pads[1]
        counted[..., top : top + x.shape[2], left : left + x.shape[3]] = True
    else:
        counted[..., : padded.shape[2] - reach[0], : padded.shape[3] - reach[1]] = True
    size = kernel[0] * kernel[1]
    values = taps.reshape(*taps.shape[:2], -1, size)  # [N, C, OH * OW, kH * kW]
    masks = windows(counted, kernel, strides, dilations, out_hw).reshape(-1, size)
    result = np.empty(values.shape[:3], dtype=x.dtype)
    # Windows fall in a few classes by which of their positions count (the interior, each
    # border and corner): one gather and one contiguous sum per class.
    classes, which = np.unique(masks, axis=0, return_inverse=True)
    for index, mask in enumerate(classes):
        at = np.flatnonzero(which.reshape(-1) == index)
        kept = np.ascontiguousarray(values[:, :, at][..., mask])
        result[:, :, at] = kept.sum(axis=-1) / np.intp(mask.sum())
    return result.reshape(*x.shape[:2], *out_hw)
