"""Element-wise kernels in whatever layout operand 0 has (`"*"`): the reference math lane by
lane on the physical arrays (`elementwise_any`), broadcasting only along axes of size 1 that
the layout does not block, and prepared to compute into the destination with ufuncs' `out=`
(`prepare_elementwise`)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.layout import LayoutSpec
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.activations import ACTIVATION_KERNELS, maps_zero_to_zero
from nnlayout.kernels.blocked.common import (
    any_dense_layout,
    any_layouts,
    any_types_reason,
    dense_operands,
    result_padding_mask,
    rezero_padding,
    sparse_operand,
)
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.registry import BindingSession, BoundKernel, Kernel, Target


def broadcasts(op: Operation, target: Target, padding: bool) -> str | None:
    """`broadcast_reason` as an `accepts`."""
    return broadcast_reason(op)


def broadcast_reason(op: Operation) -> str | None:
    """Every operand has the result's shape, or its rank with 1 on the axes it broadcasts
    along (a squeeze-and-excitation scale [N, C, 1, 1] times [N, C, H, W]): the physical
    arrays of one layout then broadcast alike, as long as no broadcast axis is blocked
    (`broadcast_layout`). An operand of lower rank (a per-channel [C, 1, 1]) is refused:
    `extend-ranks` gives it the result's rank first, so that it can take a layout."""
    if (reason := sparse_operand(op)) is not None:
        return reason
    result = shape_of(op.results[0])
    for index, operand in enumerate(op.operands):
        shape = shape_of(operand)
        if len(shape) != len(result) or any(
            size not in (1, full) for size, full in zip(shape, result, strict=True)
        ):
            return (
                f"broadcasting operand {index} {list(shape)} to {list(result)} "
                f"(the kernel broadcasts axes of size 1 of an operand of the same rank; "
                f"extend-ranks gives a shorter operand the result's rank)"
            )
    return None


def full_operand(op: Operation) -> int | None:
    """The first operand of the result's shape: the one a broadcasting op may overwrite
    (torchvision's scale * x: x)."""
    result = shape_of(op.results[0])
    return next((i for i, v in enumerate(op.operands) if shape_of(v) == result), None)


def broadcast_layout(op: Operation, spec: LayoutSpec) -> str | None:
    """No operand broadcasts along an axis that `spec` blocks: a block of a size-1 axis holds
    one real lane and padding, which would broadcast as zeros."""
    result = shape_of(op.results[0])
    for index, operand in enumerate(op.operands):
        shape = shape_of(operand)
        for axis, size, full in zip(spec.logical_axes, shape, result, strict=True):
            if size != full and spec.blocks_of(axis):
                return (
                    f"operand {index} {list(shape)} broadcasts along axis {axis}, which "
                    f"layout '{spec.text}' blocks"
                )
    return None


def _zero_preserving(op: Operation) -> bool:
    """Whether the op's math maps 0 to 0, so that padding lanes stay zero by themselves."""
    if isinstance(op, nn.ClipOp):
        low = -np.inf if op.min is None else op.min.value.data
        high = np.inf if op.max is None else op.max.value.data
        return low <= 0 <= high
    if type(op) in ACTIVATION_KERNELS:
        return maps_zero_to_zero(op)
    return _ZERO_PRESERVING[type(op)]


def elementwise_any(op: Operation, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The op's reference math applied lane by lane to the physical arrays (all in one
    layout), then padding lanes re-zeroed when the math maps 0 elsewhere."""
    out = REFERENCE_KERNELS[type(op)](op, inputs)
    return out if _zero_preserving(op) else rezero_padding(op, out)


# Whether f(0) == 0 (0 op 0 == 0 for binary ops); clip depends on its bounds.
_ZERO_PRESERVING: dict[type[Operation], bool] = {
    nn.ReluOp: True,
    nn.LeakyReluOp: True,
    nn.SigmoidOp: False,
    nn.TanhOp: True,
    nn.ExpOp: False,
    nn.NegOp: True,
    nn.AbsOp: True,
    nn.SqrtOp: True,
    nn.ClipOp: False,
    nn.AddOp: True,
    nn.SubOp: True,
    nn.MulOp: True,
    nn.DivOp: False,
    nn.MaxOp: True,
    nn.MinOp: True,
    nn.PReluOp: True,
    nn.SumOp: True,
}


_UNARY = (
    nn.ReluOp,
    nn.LeakyReluOp,
    nn.SigmoidOp,
    nn.TanhOp,
    nn.ExpOp,
    nn.NegOp,
    nn.AbsOp,
    nn.SqrtOp,
    nn.ClipOp,
    *ACTIVATION_KERNELS,
)


_NARY = (nn.AddOp, nn.SubOp, nn.MulOp, nn.DivOp, nn.MaxOp, nn.MinOp, nn.PReluOp, nn.SumOp)


Into = Callable[[Sequence[np.ndarray], np.ndarray], None]


def _ufunc(function: np.ufunc) -> Callable[[Operation], Into]:
    def into(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        function(*inputs, out=out)

    return lambda op: into


def _negative_into(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    """-x as x * -1 (the same value, signed zeros included): numpy 2.4's np.negative reads
    the wrong elements when both operands are strided alike at 16 bytes (every 4th float32,
    a halo's interior column), as `tests/fuzz_regressions/seed29-1185.mlir` found."""
    np.multiply(inputs[0], out.dtype.type(-1), out=out)


def _bounded(low: float | None, high: float | None) -> Into:
    """relu and clip as the reference computes them, max(x, low) then min(., high): NaN
    propagates, and a zero equal to a zero bound becomes the bound (numpy's maximum and
    minimum return their second operand on ties). np.clip computes the same in one pass,
    faster than maximum with a scalar (which has no SIMD loop), except that on a tie x keeps
    its own zero: adding +0.0 then turns -0.0 into a +0.0 bound. A NaN or -0.0 bound takes
    maximum and minimum."""
    bounds = [b for b in (low, high) if b is not None]
    if any(math.isnan(b) or math.copysign(1.0, b) < 0 and b == 0 for b in bounds):

        def exact(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
            x = inputs[0]
            if low is not None:
                x = np.maximum(x, out.dtype.type(low), out=out)
            if high is not None:
                x = np.minimum(x, out.dtype.type(high), out=out)
            if x is not out:
                np.copyto(out, x)

        return exact
    signed_zero = 0.0 in bounds
    low, high = -math.inf if low is None else low, math.inf if high is None else high

    def into(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        np.clip(inputs[0], out.dtype.type(low), out.dtype.type(high), out=out)
        if signed_zero:
            np.add(out, out.dtype.type(0), out=out)

    return into


def _clip_into(op: nn.ClipOp) -> Into:
    return _bounded(
        None if op.min is None else op.min.value.data, None if op.max is None else op.max.value.data
    )


def _leaky_relu_into(op: nn.LeakyReluOp) -> Into:
    """x, then alpha * x where x < 0 (x >= 0 and NaN keep x, as in the reference)."""
    alpha = op.alpha.value.data

    def into(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        np.copyto(out, inputs[0])
        np.multiply(out.dtype.type(alpha), out, out=out, where=np.less(out, 0))

    return into


def _sigmoid_into(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    """e = exp(-|x|); e / (1 + e), then 1 / (1 + e) where x >= 0 (taken before `out`, maybe
    x's memory, is written)."""
    x = inputs[0]
    positive = np.greater_equal(x, 0)
    _negative_into([np.abs(x, out=out)], out)
    np.exp(out, out=out)
    denominator = np.add(1, out)
    np.divide(out, denominator, out=out)
    np.divide(1, denominator, out=out, where=positive)


def _reference_into(op: Operation) -> Into:
    """The reference kernel's result copied into `out` (the activations: their numpy
    formulas allocate temporaries anyway)."""
    kernel = REFERENCE_KERNELS[type(op)]

    def into(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        np.copyto(out, kernel(op, inputs))

    return into


def _prelu_into(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    """x, then slope * x where x < 0 (taken before `out`, maybe x's memory, is written)."""
    x, slope = inputs
    negative = np.less(x, 0)
    np.copyto(out, x)
    np.multiply(out, slope, out=out, where=negative)


def _sum_into(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    """((x0 + x1) + x2) + ...; an operand after x1 that `out` overlaps would be overwritten
    before it is read, so then the sum is computed aside."""
    if any(np.may_share_memory(x, out) for x in inputs[2:]):
        np.copyto(out, functools.reduce(np.add, inputs[1:], inputs[0]))
        return
    total = inputs[0]
    for x in inputs[1:]:
        total = np.add(total, x, out=out)
    if total is not out:
        np.copyto(out, total)


_INTO: dict[type[Operation], Callable[[Operation], Into]] = {
    nn.ReluOp: lambda op: _bounded(0.0, None),
    nn.ClipOp: _clip_into,
    nn.LeakyReluOp: _leaky_relu_into,
    nn.SigmoidOp: lambda op: _sigmoid_into,
    nn.TanhOp: _ufunc(np.tanh),
    nn.ExpOp: _ufunc(np.exp),
    nn.NegOp: lambda op: _negative_into,
    nn.AbsOp: _ufunc(np.abs),
    nn.SqrtOp: _ufunc(np.sqrt),
    **dict.fromkeys(ACTIVATION_KERNELS, _reference_into),
    nn.AddOp: _ufunc(np.add),
    nn.SubOp: _ufunc(np.subtract),
    nn.MulOp: _ufunc(np.multiply),
    nn.DivOp: _ufunc(np.divide),
    nn.MaxOp: _ufunc(np.maximum),
    nn.MinOp: _ufunc(np.minimum),
    nn.PReluOp: lambda op: _prelu_into,
    nn.SumOp: lambda op: _sum_into,
}


def prepare_elementwise(op: Operation, session: BindingSession | None) -> BoundKernel:
    """An element-wise `*_any` kernel computing into `out`, then re-zeroing padding lanes
    unless the math is zero-preserving. An operand that broadcasts along axes of size 1
    (a per-channel constant [1, C, 1, 1], in any layout) is read by the ufuncs as it is;
    operands of another rank or dtype than `out` take the unprepared kernel."""
    mask = None if _zero_preserving(op) else result_padding_mask(op)
    return computing_into(op, _INTO[type(op)](op), mask, elementwise_any)


def computing_into(
    op: Operation,
    into: Into,
    mask: np.ndarray | None,
    unprepared: Callable[[Operation, Sequence[np.ndarray]], np.ndarray],
    same_dtype: bool = True,
) -> BoundKernel:
    """`into` writing the op's result into `out`, then the lanes of `mask` (padding) zeroed;
    operands that do not broadcast into `out` as they are (another rank, or with
    `same_dtype` another dtype) take `unprepared`."""

    def bound(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        if not all(_broadcasts_into(x, out, same_dtype) for x in inputs):
            out[...] = unprepared(op, inputs)
            return
        into(inputs, out)
        if mask is not None:
            np.copyto(out, out.dtype.type(0), where=mask)

    return bound


def _broadcasts_into(x: np.ndarray, out: np.ndarray, same_dtype: bool) -> bool:
    """Whether `x` has `out`'s rank (and dtype, if `same_dtype`), each axis of `out`'s size
    or 1."""
    return (
        (x.dtype == out.dtype or not same_dtype)
        and x.ndim == out.ndim
        and all(size in (1, full) for size, full in zip(x.shape, out.shape, strict=True))
    )


def any_layout_kernel(
    op_type: type[Operation],
    impl: Callable[[Operation, Sequence[np.ndarray]], np.ndarray],
    prepare: Callable[[Operation, BindingSession | None], BoundKernel],
    nary: bool,
    **fields: Any,
) -> Kernel:
    """The `*_any` descriptor of an element-wise op (its other `Kernel` fields given); an
    n-ary one broadcasts."""
    return Kernel(
        op_type.name.removeprefix("nn.") + "_any",
        op_type,
        "blocked",
        impl,
        layouts=any_layouts,
        accepts_layout=broadcast_layout if nary else any_dense_layout,
        # The layout rules decide what these compute right.
        accepts_types=functools.partial(
            any_types_reason,
            shapes=broadcast_reason if nary else sparse_operand,
            check=broadcast_layout if nary else any_dense_layout,
        ),
        prepare=prepare,
        accepts=broadcasts if nary else dense_operands,
        **fields,
    )


def _elementwise_kernel(op_type: type[Operation]) -> Kernel:
    nary = op_type in _NARY
    return any_layout_kernel(
        op_type,
        elementwise_any,
        prepare_elementwise,
        nary,
        in_place=0,
        in_place_of=full_operand if nary else None,
    )


KERNELS: tuple[Kernel, ...] = tuple(_elementwise_kernel(op_type) for op_type in (*_UNARY, *_NARY))
