"""Reference kernels of the reductions and the normalisations (`nn.reduce`, `nn.layer_norm`,
`nn.lrn`, inference `nn.batch_norm`) and of the running sum (`nn.cumsum`): part of the oracle
(`reference.REFERENCE_KERNELS` lists them), on logical arrays, with ONNX's semantics, NaN
included. Float sums are accumulated in float64 and the result rounded once to the input's
dtype; integer ones in the integers' own type, wrapping as ONNX's do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from nnlayout.dialects import nn

Axes = tuple[int, ...]


REDUCTIONS: dict[str, Callable[[np.ndarray, Axes], np.ndarray]] = {
    "sum": lambda x, axes: x.sum(axis=axes, keepdims=True),
    "mean": lambda x, axes: x.mean(axis=axes, keepdims=True),
    "max": lambda x, axes: x.max(axis=axes, keepdims=True),
    "min": lambda x, axes: x.min(axis=axes, keepdims=True),
    "prod": lambda x, axes: x.prod(axis=axes, keepdims=True),
    "l1": lambda x, axes: np.abs(x).sum(axis=axes, keepdims=True),
    "l2": lambda x, axes: np.sqrt((x * x).sum(axis=axes, keepdims=True)),
    "sum_square": lambda x, axes: (x * x).sum(axis=axes, keepdims=True),
    "log_sum": lambda x, axes: np.log(x.sum(axis=axes, keepdims=True)),
}


def reduce(op: nn.ReduceOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The op's kind over its axes, kept as size 1, computed in float64 (integers in their
    own type, exact: past its range a sum or product wraps, which ONNX leaves undefined)."""
    x = inputs[0]
    if x.dtype.kind in "iu":
        return REDUCTIONS[op.kind.data](x, op.reduced_axes).astype(x.dtype)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        result = REDUCTIONS[op.kind.data](x.astype(np.float64), op.reduced_axes)
    return result.astype(x.dtype)


def layer_norm(op: nn.LayerNormOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """(x - mean) / sqrt(variance + epsilon) * scale + bias over the axes from `axis` on,
    in float64 (ONNX computes the statistics in float32, its stash type)."""
    x, scale, *bias = inputs
    axes = tuple(range(op.normalized_axis, x.ndim))
    wide = x.astype(np.float64)
    centred = wide - wide.mean(axis=axes, keepdims=True)
    variance = (centred * centred).mean(axis=axes, keepdims=True)
    result = centred / np.sqrt(variance + np.float64(np.float32(op.epsilon.value.data)))
    result = result * scale
    if bias:
        result = result + bias[0]
    return result.astype(x.dtype)


def lrn(op: nn.LrnOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """x / (bias + alpha / size * square_sum) ** beta, square_sum over the channels from
    c - floor((size - 1) / 2) to c + ceil((size - 1) / 2) that exist (ONNX LRN)."""
    x = inputs[0]
    size = op.size.value.data
    before, after = (size - 1) // 2, size // 2  # floor and ceil of (size - 1) / 2
    squares = np.square(x.astype(np.float64))
    channels = x.shape[1]
    padded = np.pad(squares, [(0, 0), (before, after)] + [(0, 0)] * (x.ndim - 2))
    # One shifted slice per window position (a running sum would carry a NaN or an
    # infinity into channels whose window does not hold it).
    square_sum = sum(padded[:, k : k + channels] for k in range(size))
    alpha, beta, bias = (float(np.float32(a.value.data)) for a in (op.alpha, op.beta, op.bias))
    return (x / (bias + alpha / size * square_sum) ** beta).astype(x.dtype)


def cumsum(op: nn.CumSumOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The running sum along the axis (`reverse`: from its end; `exclusive`: of the elements
    before each, 0 for the first)."""
    x, axis = inputs[0], op.normalized_axis
    wide = np.float64 if x.dtype.kind == "f" else x.dtype
    ordered = np.flip(x, axis) if op.reverse else x
    sums = np.cumsum(ordered, axis=axis, dtype=wide)
    if op.exclusive:  # shifted by one along the axis
        sums = np.concatenate(
            [
                np.zeros_like(np.take(sums, [0], axis)),
                np.take(sums, range(x.shape[axis] - 1), axis),
            ],
            axis,
        )
    return np.ascontiguousarray(np.flip(sums, axis) if op.reverse else sums).astype(x.dtype)


def batch_norm(op: nn.BatchNormOp | nn.QBatchNormOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Inference batch norm as x * factor + shift, per channel (axis 1), in x's type."""
    x, *vectors = inputs
    factor, shift = batch_norm_affine(vectors, x.dtype.type(op.epsilon.value.data))
    channel = (1, -1) + (1,) * (x.ndim - 2)
    return x * factor.reshape(channel) + shift.reshape(channel)


def batch_norm_affine(
    vectors: Sequence[np.ndarray], epsilon: np.generic
) -> tuple[np.ndarray, np.ndarray]:
    """Batch norm's per-channel factor and shift from its scale, bias, mean and var:
    scale / sqrt(var + epsilon) and bias - mean * factor."""
    scale, bias, mean, var = vectors
    factor = scale / np.sqrt(var + epsilon)
    return factor, bias - mean * factor
