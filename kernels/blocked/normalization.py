"""Blocked batch norm (`batch_norm_nchwc`): NCHW{b}c data, C{b}c vectors, one multiply-add
per lane."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nnlayout.dialects import nn
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.blocked.common import (
    Layouts,
    blocked_spec,
    channel_reason,
    check_blocked,
    layout_spec,
    layouts_reason,
    not_one_blocked_layout,
    prepared,
)
from nnlayout.kernels.blocked.options import BlockedOptions
from nnlayout.kernels.registry import Kernel, Target


def _batch_norm_accepts(op: nn.BatchNormOp, target: Target, padding: bool) -> str | None:
    """Rank-4 (NCHW) inputs; channels padded only with padding on."""
    x = shape_of(op.input)
    if len(x) != 4:
        return f"rank-{len(x)} input; the blocked kernel needs NCHW"
    return channel_reason("input", x[1], target, padding)


def _batch_norm_types_reason(op: nn.BatchNormOp) -> str | None:
    """Why batch_norm_nchwc cannot read `op`'s operands as typed (None when it can): input
    and result in one NCHW{b}c, the four vectors in C{b}c."""
    spec = blocked_spec(op.operands[0])
    if spec is None or layout_spec(op.results[0]) != spec:
        return not_one_blocked_layout(op)
    vector = f"C{spec.block_product('C')}c"
    return layouts_reason(
        [
            (name, value, vector)
            for name, value in zip(
                ("scale", "bias", "mean", "variance"), op.operands[1:], strict=True
            )
        ]
    )


def _batch_norm_layouts(op: nn.BatchNormOp, target: Target) -> Layouts:
    """NCHW{b}c input and result, C{b}c parameter vectors."""
    options = BlockedOptions.of(target)
    return (
        (options.activation_layout,) + (options.channel_vector_layout,) * 4,
        (options.activation_layout,),
    )


def batch_norm_nchwc(op: nn.BatchNormOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """x * factor + (bias - mean * factor) with factor = scale / sqrt(var + eps), per lane.
    Padded parameters are zero, so padded lanes get 0 * factor + (0 - 0 * factor); factor is
    0 / sqrt(eps) = 0 there, except with eps = 0 (0 / 0 = NaN), hence the factor's padding
    lanes are re-zeroed."""
    check_blocked(op)
    factor, shift = _batch_norm_factors(op, inputs)
    return inputs[0] * factor + shift


def _batch_norm_factors(
    op: nn.BatchNormOp, inputs: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """factor and shift, shaped [Cb, 1, 1, b] to broadcast over NCHW{b}c."""
    x, scale, bias, mean, var = inputs
    vector_spec = layout_spec(op.scale)
    eps = x.dtype.type(op.epsilon.value.data)
    factor = scale / np.sqrt(var + eps)
    if vector_spec is not None:
        factor = vector_spec.zero_padding(factor, shape_of(op.scale))
    shift = bias - mean * factor
    return factor[:, None, None, :], shift[:, None, None, :]


def _batch_norm_into(op: nn.BatchNormOp, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    check_blocked(op)
    factor, shift = _batch_norm_factors(op, inputs)  # before `out`, maybe x, is written
    np.add(np.multiply(inputs[0], factor, out=out), shift, out=out)


KERNELS: tuple[Kernel, ...] = (
    Kernel(
        "batch_norm_nchwc",
        nn.BatchNormOp,
        "blocked",
        batch_norm_nchwc,
        accepts=_batch_norm_accepts,
        layouts=_batch_norm_layouts,
        in_place=0,
        accepts_types=_batch_norm_types_reason,
        prepare=prepared(_batch_norm_into, batch_norm_nchwc, rezero=False),
    ),
)
