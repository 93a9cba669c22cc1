"""Reference kernels of `nn.compare`, `nn.logical` and `nn.where` (`dialects/nn/logical.py`),
part of the oracle (`reference.REFERENCE_KERNELS` lists them), and their prepared forms, which
write into the destination with the same numpy operations: a mask is numpy's bool, a comparison
with NaN is false, "ne" true (numpy's, IEEE's, ONNX's), and a selection copies elements, exact
on any type."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.kernels.registry import BindingSession, BoundKernel

_UFUNCS: dict[str, np.ufunc] = {
    "eq": np.equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "ne": np.not_equal,
}
_LOGICAL: dict[str, np.ufunc] = {
    "and": np.logical_and,
    "or": np.logical_or,
    "xor": np.logical_xor,
}


def compare(op: nn.CompareOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """lhs <predicate> rhs, broadcast, as bool."""
    return _UFUNCS[op.predicate.data](inputs[0], inputs[1])


def logical(op: nn.LogicalOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """lhs <operation> rhs of two masks, broadcast."""
    return _LOGICAL[op.operation.data](inputs[0], inputs[1])


def where(op: nn.WhereOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """x where the mask is true, else y, broadcast to the result's shape."""
    mask, x, y = inputs
    return np.where(mask, x, y).astype(x.dtype, copy=False)


def _compare_into(op: nn.CompareOp, session: BindingSession | None) -> BoundKernel:
    ufunc = _UFUNCS[op.predicate.data]

    def bound(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        ufunc(inputs[0], inputs[1], out=out)

    return bound


def _logical_into(op: nn.LogicalOp, session: BindingSession | None) -> BoundKernel:
    ufunc = _LOGICAL[op.operation.data]

    def bound(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        ufunc(inputs[0], inputs[1], out=out)

    return bound


def _where_into(op: nn.WhereOp, session: BindingSession | None) -> BoundKernel:
    def bound(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        mask, x, y = inputs
        np.copyto(out, y)  # broadcast; then x over it where the mask holds
        np.copyto(out, x, where=mask)

    return bound


LOGICAL_REFERENCE_KERNELS: dict[type[Operation], Callable[[Any, Sequence[np.ndarray]], Any]] = {
    nn.CompareOp: compare,
    nn.LogicalOp: logical,
    nn.WhereOp: where,
}
PREPARED_LOGICAL_KERNELS: dict[
    type[Operation], Callable[[Any, BindingSession | None], BoundKernel]
] = {nn.CompareOp: _compare_into, nn.LogicalOp: _logical_into, nn.WhereOp: _where_into}
