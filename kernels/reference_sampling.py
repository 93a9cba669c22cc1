"""The reference kernel of `nn.grid_sample` (ONNX GridSample, torch's `F.grid_sample`) and the
cubic convolution weights it shares with the importer's cubic Resize.

As onnxruntime computes it: each grid point is denormalised to pixel coordinates (in
float32), rounded half to even in nearest mode, and interpolated from its 1, 2 x 2 or 4 x 4
taps, each tap outside the image reading 0 ("zeros"), the border's pixel ("border") or the
pixel its index reflects to ("reflection"). (onnx's reference evaluator also clamps or
reflects the point itself first, which gives the same numbers in nearest and linear mode but
not in cubic mode; onnxruntime and torch treat each tap alone.) Interpolated in float64,
rounded once. A point whose coordinate is not finite gives NaN (onnxruntime's result there
is undefined behaviour of its float-to-integer casts).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nnlayout.dialects import nn

CUBIC_COEFFICIENT = -0.75  # GridSample's (and torch's) cubic kernel


def cubic_weights(t: np.ndarray, a: float) -> np.ndarray:
    """The weights [..., 4] of the taps at floor - 1 .. floor + 2 of coordinates whose
    fractions are `t` (Keys' cubic convolution kernel with coefficient `a`)."""
    d = np.stack([1 + t, t, 1 - t, 2 - t], axis=-1)
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


def _reflected(x: np.ndarray, low: float, high: float) -> np.ndarray:
    """`x` reflected by the near border until it lies within [low, high]."""
    span = high - low
    if span <= 0:
        return np.full_like(x, low)
    below, above = x < low, x > high
    dx = np.where(below, low - x, np.where(above, x - high, 0.0))
    turns = np.floor(dx / span)
    rest = dx - turns * span
    even = turns % 2 == 0
    from_low = np.where(even, low + rest, high - rest)
    from_high = np.where(even, high - rest, low + rest)
    return np.where(below, from_low, np.where(above, from_high, x))


class _Axis:
    """One spatial axis of the image: its size, borders and padding rule."""

    def __init__(self, size: int, align_corners: bool, padding: str):
        self.size, self.padding = size, padding
        self.borders = (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)
        self.align_corners = align_corners

    def coordinates(self, normalised: np.ndarray, nearest: bool) -> np.ndarray:
        """Pixel coordinates of grid values, computed in float32 as onnxruntime computes
        them (a coordinate that float64 would put on the other side of a tie or an integer
        picks the same taps), rounded half to even in nearest mode."""
        n, one, two = normalised.astype(np.float32), np.float32(1), np.float32(2)
        if self.align_corners:
            x = (n + one) / two * np.float32(self.size - 1)
        else:
            x = ((n + one) * np.float32(self.size) - one) / two
        return (np.rint(x) if nearest else x).astype(np.float64)

    def taps(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Tap indices read as the padding says, and whether each reads the image."""
        if self.padding == "zeros":
            inside = (index >= 0) & (index < self.size)
            return np.clip(index, 0, self.size - 1), inside
        if self.padding == "border":
            return np.clip(index, 0, self.size - 1), np.ones(index.shape, bool)
        reflected = np.trunc(_reflected(index.astype(np.float64), *self.borders))
        return np.clip(reflected.astype(np.int64), 0, self.size - 1), np.ones(index.shape, bool)


def _tap_weights(x: np.ndarray, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """(first tap index, weights [..., taps]) of coordinates `x` along one axis."""
    finite = np.where(np.isfinite(x), np.clip(x, -(2.0**40), 2.0**40), 0.0)
    first = np.floor(finite)
    if mode == "nearest":
        return np.trunc(finite).astype(np.int64), np.ones((*x.shape, 1))
    t = finite - first
    if mode == "linear":
        return first.astype(np.int64), np.stack([1 - t, t], axis=-1)
    return first.astype(np.int64) - 1, cubic_weights(t, CUBIC_COEFFICIENT)


def grid_sample(op: nn.GridSampleOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    image, grid = inputs
    n, c, h, w = image.shape
    align, mode = op.align_corners is not None, op.mode.data
    rows, columns = (_Axis(size, align, op.padding.data) for size in (h, w))
    with np.errstate(all="ignore"):
        ys = rows.coordinates(grid[..., 1], mode == "nearest")
        xs = columns.coordinates(grid[..., 0], mode == "nearest")
        top, y_weights = _tap_weights(ys, mode)
        left, x_weights = _tap_weights(xs, mode)
        batch = np.arange(n)[:, None, None]
        total = np.zeros((n, *grid.shape[1:3], c))
        for i in range(y_weights.shape[-1]):
            r, r_in = rows.taps(top + i)
            for j in range(x_weights.shape[-1]):
                col, c_in = columns.taps(left + j)
                values = image[batch, :, r, col].astype(np.float64)  # [N, Ho, Wo, C]
                values = np.where((r_in & c_in)[..., None], values, 0.0)
                total += (y_weights[..., i] * x_weights[..., j])[..., None] * values
        total[~(np.isfinite(xs) & np.isfinite(ys))] = np.nan
    return np.moveaxis(total, -1, 1).astype(image.dtype)
