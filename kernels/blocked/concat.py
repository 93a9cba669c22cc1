"""Blocked concat (`concat_nchwc`): whole channel blocks of NCHW{b}c inputs, one after the
other."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nnlayout.dialects import nn
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.blocked.common import (
    Layouts,
    blocked_spec,
    check_blocked,
    layout_spec,
    prepared,
)
from nnlayout.kernels.blocked.options import BlockedOptions
from nnlayout.kernels.registry import Kernel, Target


def _concat_accepts(op: nn.ConcatOp, target: Target, padding: bool) -> str | None:
    """Rank 4, along the channel axis, each input's channels a multiple of the block (the
    channel blocks are then simply concatenated)."""
    rank = len(shape_of(op.output))
    if rank != 4:
        return f"rank-{rank} tensors; the blocked kernel needs NCHW"
    if op.normalized_axis != 1:
        return f"concatenation along axis {op.normalized_axis}, not the channel axis 1"
    block = BlockedOptions.of(target).block
    for index, value in enumerate(op.inputs):
        channels = shape_of(value)[1]
        if channels % block:
            return f"input {index} has {channels} channels, not a multiple of the block {block}"
    return None


def _concat_types_reason(op: nn.ConcatOp) -> str | None:
    """Why concat_nchwc cannot join `op`'s inputs as typed (None when it can): each input in
    the result's NCHW{b}c, with channels that fill whole blocks (a padded block would land
    inside the result)."""
    spec = blocked_spec(op.output)
    if spec is None or op.normalized_axis != 1:
        return (
            f"result of type {op.output.type} is not channel-blocked NCHW{{b}}c joined "
            "along channels; run insert-layouts before calling a blocked kernel"
        )
    b = spec.block_product("C")
    for index, value in enumerate(op.inputs):
        if layout_spec(value) != spec or shape_of(value)[1] % b:
            return (
                f"input {index} of type {value.type} is not {shape_of(value)[1]} channels "
                f"in whole blocks of the result's layout {spec.text}"
            )
    return None


def _concat_layouts(op: nn.ConcatOp, target: Target) -> Layouts:
    """NCHW{b}c inputs and result."""
    activations = BlockedOptions.of(target).activation_layout
    return (activations,) * len(op.inputs), (activations,)


def concat_nchwc(op: nn.ConcatOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Whole channel blocks of NCHW{b}c inputs, one after the other."""
    check_blocked(op)
    return np.concatenate(inputs, axis=1)


def _concat_into(op: nn.ConcatOp, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    check_blocked(op)
    np.concatenate(inputs, axis=1, out=out)  # an input already in its slot is not copied


KERNELS: tuple[Kernel, ...] = (
    Kernel(
        "concat_nchwc",
        nn.ConcatOp,
        "blocked",
        concat_nchwc,
        accepts=_concat_accepts,
        layouts=_concat_layouts,
        accepts_types=_concat_types_reason,
        prepare=prepared(_concat_into, concat_nchwc, rezero=False),
    ),
)
