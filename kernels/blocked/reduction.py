"""`nn.reduce` in whatever layout operand 0 has (`"*"`): the reduction over the physical axes
of the reduced logical ones, so that a channel-blocked tensor need not be reordered to be
reduced, over its channels or not.

Padding lanes (invariant 2: zeros) are where a blocked reduced axis is padded: a sum, a mean's
sum and the norms add nothing for them, but a max, a min and a product would see a zero, so
for those kinds the lanes are set to the kind's identity first (-inf, +inf, 1); a mean divides
by the logical count, not the physical one. A reduced blocked axis leaves one element, in the
first lane of its block; the result's other lanes are re-zeroed.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.layout import Block, LayoutSpec
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.blocked.common import (
    any_layouts,
    any_types_reason,
    dense_operands,
    layout_spec,
    rezero_padding,
    sparse_operand,
)
from nnlayout.kernels.reduction_reference import REDUCTIONS, reduce
from nnlayout.kernels.registry import Kernel

# What a padding lane must hold so that it changes no result of the kind (those missing: 0).
_IDENTITIES = {"max": -np.inf, "min": np.inf, "prod": 1.0}


def _physical_axes(spec: LayoutSpec, axes: Sequence[int]) -> tuple[int, ...]:
    """The physical positions of the reduced logical `axes`: each axis and its blocks."""
    names = {spec.logical_axes[a] for a in axes}
    return tuple(
        i
        for i, dim in enumerate(spec.dims)
        if (dim.axis if isinstance(dim, Block) else dim) in names
    )


def reduce_any(op: nn.ReduceOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The op's kind over the physical axes of its reduced ones, in float64; the result in
    operand 0's layout."""
    spec, x = layout_spec(op.input), inputs[0]
    if spec is None:
        return reduce(op, inputs)
    shape, kind = shape_of(op.input), op.kind.data
    axes = _physical_axes(spec, op.reduced_axes)
    wide = x.astype(np.float64)
    if kind in _IDENTITIES and spec.padding_elements(shape):
        wide[spec.padding_mask(shape)] = _IDENTITIES[kind]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if kind == "mean":
            reduced = wide.sum(axis=axes, keepdims=True)
            reduced /= math.prod(shape[a] for a in op.reduced_axes)
        else:
            reduced = REDUCTIONS[kind](wide, axes)
    out = np.zeros(spec.physical_shape(shape_of(op.output)), x.dtype)
    # A reduced block keeps one element, in its first lane.
    out[tuple(slice(0, reduced.shape[i]) for i in range(out.ndim))] = reduced
    return rezero_padding(op, out)


def _reduce_layout(op: Operation, spec: LayoutSpec) -> str | None:
    """Any dense layout of the op's rank."""
    rank = len(shape_of(op.operands[0]))
    if spec.rank != rank:
        return f"layout '{spec.text}' is of rank {spec.rank}, the input of rank {rank}"
    return None


KERNELS: tuple[Kernel, ...] = (
    Kernel(
        "reduce_any",
        nn.ReduceOp,
        "blocked",
        reduce_any,
        accepts=dense_operands,
        layouts=any_layouts,
        accepts_layout=_reduce_layout,
        accepts_types=functools.partial(
            any_types_reason, shapes=sparse_operand, check=_reduce_layout
        ),
    ),
)
