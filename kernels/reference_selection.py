"""Reference kernels of the selections (`nn.argmax`, `nn.argmin`, `nn.topk`), with
onnxruntime's treatment of ties and NaN (dialects/nn/selection.py): ArgMax and ArgMin scan
from the first element and NaN never wins; TopK sorts stably, NaN above every number."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nnlayout.dialects import nn


def _below_all(dtype: np.dtype, largest: bool) -> np.generic:
    """A value no element beats: -inf (+inf) for floats, the integer range's end."""
    if dtype.kind == "f":
        return dtype.type(-np.inf if largest else np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.min if largest else info.max)


def arg_extremum(op: nn.ArgExtremumOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    x = inputs[0]
    axis = op.normalized_axis
    numbers = ~np.isnan(x) if x.dtype.kind == "f" else np.ones(x.shape, bool)
    largest = isinstance(op, nn.ArgMaxOp)
    candidates = np.where(numbers, x, _below_all(x.dtype, largest))
    best = (np.max if largest else np.min)(candidates, axis=axis, keepdims=True)
    winners = numbers & (x == best)
    if op.select_last is None:
        index = np.argmax(winners, axis=axis, keepdims=True)
    else:
        last = np.argmax(np.flip(winners, axis=axis), axis=axis, keepdims=True)
        index = x.shape[axis] - 1 - last
    first_is_number = np.take(numbers, [0], axis=axis)
    return np.where(first_is_number, index, 0).astype(np.int64)


def topk(op: nn.TopKOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    x = inputs[0]
    axis, k = op.normalized_axis, op.k.value.data
    if op.smallest is not None:  # NaN last: numpy's order
        order = np.argsort(x, axis=axis, kind="stable")
    elif x.dtype.kind == "f":  # NaN first, then the numbers from the largest
        nan = np.isnan(x)
        order = np.lexsort((np.where(nan, 0, -x), ~nan), axis=axis)
    else:
        order = np.argsort(~x, axis=axis, kind="stable")  # ~x = -x - 1: the order reversed
    return np.take(order, np.arange(k), axis=axis).astype(np.int64)
