"""Resize in ONNX's cubic mode (torch's `F.interpolate(..., mode="bicubic")`) as one product
per resized spatial axis with a constant interpolation matrix.

Why: cubic interpolation along one axis is linear in the input, so it is a matrix of the
output index by the input index, known at import (shapes are static): four taps per output
index, at the floor of its source coordinate minus one to plus two, weighted by the cubic
kernel with ONNX's `cubic_coeff_a`; taps outside the axis read its edge (or, with
`exclude_outside`, weigh 0 and the others are renormalised), as onnxruntime computes it. The
width is resized by x @ A_w^T and the height by A_h @ x (numpy's matmul broadcasts the matrix
over N and C), products oneDNN runs; no new op or kernel is needed.

    %y = "Resize"(%x) {mode = "cubic"}        ->   %w = nn.matmul %x, %aw_t
    (1x3x8x8 -> 1x3x16x16)                          %y = nn.matmul %ah, %w
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.state import ImportState
from nnlayout.kernels.reference_movement import source_coordinates
from nnlayout.kernels.reference_sampling import cubic_weights


def interpolation_matrix(
    size: int, out: int, scale: float, coordinates: str, a: float, exclude_outside: bool
) -> np.ndarray:
    """[out, size] float64: row i holds the weights of the input indices output index i
    interpolates along one axis."""
    x = source_coordinates(coordinates, size, out, scale)
    floor = np.floor(x)
    taps = floor.astype(np.int64)[:, None] + np.arange(-1, 3)
    weights = cubic_weights(x - floor, a)
    if exclude_outside:
        weights = np.where((taps >= 0) & (taps < size), weights, 0.0)
        weights = weights / weights.sum(axis=1, keepdims=True)
    matrix = np.zeros((out, size))
    rows = np.repeat(np.arange(out), 4)
    np.add.at(matrix, (rows, np.clip(taps, 0, size - 1).ravel()), weights.ravel())
    return matrix


def cubic_resize(
    state: ImportState,
    x: SSAValue,
    sizes: Sequence[int],
    scales: Sequence[float],
    coordinates: str,
    attrs: dict,
) -> SSAValue:
    """`x` [N, C, H, W] resized to `sizes` (its H and W) in cubic mode: a product per axis
    whose matrix is not the identity; `x` itself where neither changes anything."""
    a = float(attrs.get("cubic_coeff_a", -0.75))
    exclude = bool(int(attrs.get("exclude_outside", 0)))
    shape = nn.shape_of(x)
    h, w = (
        interpolation_matrix(shape[axis], sizes[axis], scales[axis], coordinates, a, exclude)
        for axis in (2, 3)
    )
    y = x
    if w.shape[0] != w.shape[1] or not np.array_equal(w, np.eye(w.shape[0])):
        columns = state.made_constant("resize_cubic_w", w.T.astype(np.float32))
        y = state.emit(state.build(lambda: nn.MatmulOp(y, columns)))
    if h.shape[0] != h.shape[1] or not np.array_equal(h, np.eye(h.shape[0])):
        rows = state.made_constant("resize_cubic_h", h.astype(np.float32))
        y = state.emit(state.build(lambda: nn.MatmulOp(rows, y)))
    return y
