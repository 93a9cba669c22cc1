"""Pooling in whatever layout operand 0 has (`"*"`): max, average and global average pooling
over the physical H and W axes, with C blocked or not, folding one tap at a time."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.layout import LayoutSpec
from nnlayout.dialects.nn import ints, shape_of
from nnlayout.kernels.blocked.common import (
    any_layouts,
    any_types_reason,
    layout_spec,
    padded_end,
    prepared,
    rezero_padding,
    sliding_windows,
    sparse_operand,
)
from nnlayout.kernels.registry import Kernel, Target


def _nhw_axes(spec: LayoutSpec | None) -> tuple[int, int, int]:
    """Physical positions of the N, H and W axes (NCHW for a plain tensor)."""
    if spec is None:
        return 0, 2, 3
    return spec.dims.index("N"), spec.dims.index("H"), spec.dims.index("W")


def _pool_layout(op: Operation, spec: LayoutSpec) -> str | None:
    """Pooling windows slide over the physical H and W axes, so N, H and W must be whole
    axes of a rank-4 layout; C may be blocked and the axes may come in any order."""
    if set(spec.axes) != set("NCHW"):
        return f"layout '{spec.text}' is not a layout of N, C, H and W"
    blocked = [axis for axis in "NHW" if spec.blocks_of(axis)]
    if blocked:
        return f"layout '{spec.text}' blocks axis {blocked[0]}; pooling needs whole N, H and W"
    return None


def _pool_accepts(op: Operation, target: Target, padding: bool) -> str | None:
    return _pool_rank_reason(op)


def _pool_rank_reason(op: Operation) -> str | None:
    """Rank-4 dense inputs only."""
    if (reason := sparse_operand(op)) is not None:
        return reason
    rank = len(shape_of(op.operands[0]))
    return None if rank == 4 else f"rank-{rank} input; the kernel needs N, C, H, W"


def max_pool2d_any(op: nn.MaxPool2dOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Spatial padding is -inf, so it never wins. A window that sees only padding (possible
    with dilation) yields -inf, also on channel padding lanes: those are re-zeroed."""
    windows = _max_pool_windows(op, inputs[0])
    return rezero_padding(
        op, _fold_taps(windows, np.maximum, np.empty(windows.shape[:-2], windows.dtype))
    )


def _fold_taps(windows: np.ndarray, combine: np.ufunc, out: np.ndarray) -> np.ndarray:
    """`combine` folded over the windows' last two (tap) axes into `out`, one whole-tensor
    op a tap: faster than numpy's reduction over those innermost, strided axes. A sum starts
    from +0, as numpy's do: taps that are all -0 sum to +0."""
    if combine is np.add:
        np.add(windows[..., 0, 0], 0.0, out=out)
    else:
        np.copyto(out, windows[..., 0, 0])
    for i in range(windows.shape[-2]):
        for j in range(windows.shape[-1]):
            if i or j:
                combine(out, windows[..., i, j], out=out)
    return out


def _max_pool_windows(op: nn.MaxPool2dOp, x: np.ndarray) -> np.ndarray:
    _, h, w = _nhw_axes(layout_spec(op.input))
    return sliding_windows(
        x,
        (h, w),
        ints(op.kernel),
        ints(op.strides),
        ints(op.pads),
        ints(op.dilations),
        shape_of(op.output)[2:],
        -np.inf,
    )


def _window_counts(
    size: int,
    out: int,
    kernel: int,
    stride: int,
    begin: int,
    end: int,
    dilation: int,
    include_pad: bool,
) -> np.ndarray:
    """How many positions of each of the `out` windows along one axis count in the divisor:
    input positions, plus the explicit pads with count_include_pad (never ceil_mode's
    overhang past them)."""
    total = begin + size + padded_end(size, begin, out, kernel, stride, dilation)
    counted = np.zeros(total)
    if include_pad:
        counted[: begin + size + end] = 1
    else:
        counted[begin : begin + size] = 1
    windows = sliding_window_view(counted, (kernel - 1) * dilation + 1)
    return windows[: (out - 1) * stride + 1 : stride, ::dilation].sum(axis=-1)


def avg_pool2d_any(op: nn.AvgPool2dOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Window sums over the zero-padded input divided by the number of positions that count,
    as in ONNX (count_include_pad, ceil_mode). Counts factor into height x width counts.
    Channel padding lanes sum to 0; a window with no counted position divides 0 by 0,
    so they are re-zeroed."""
    windows = _avg_pool_windows(op, inputs[0])
    out = np.empty(windows.shape[:-2], windows.dtype)
    _average(op, inputs[0], windows, out)
    return rezero_padding(op, out)


def _avg_pool_windows(op: nn.AvgPool2dOp, x: np.ndarray) -> np.ndarray:
    _, h, w = _nhw_axes(layout_spec(op.input))
    return sliding_windows(
        x,
        (h, w),
        ints(op.kernel),
        ints(op.strides),
        ints(op.pads),
        ints(op.dilations),
        shape_of(op.output)[2:],
        0.0,
    )


def _avg_pool_divisor(op: nn.AvgPool2dOp, x: np.ndarray) -> np.ndarray:
    """The divisor of each window, shaped to broadcast over the result."""
    _, h, w = _nhw_axes(layout_spec(op.input))
    kernel, strides, pads, dilations = (
        ints(op.kernel),
        ints(op.strides),
        ints(op.pads),
        ints(op.dilations),
    )
    out_hw = shape_of(op.output)[2:]
    counts = [
        _window_counts(
            x.shape[axis],
            out_hw[a],
            kernel[a],
            strides[a],
            pads[a],
            pads[a + 2],
            dilations[a],
            op.count_include_pad is not None,
        )
        for a, axis in enumerate((h, w))
    ]
    divisor_shape = [1] * x.ndim
    divisor_shape[h], divisor_shape[w] = out_hw
    divisor = np.multiply.outer(*counts).astype(x.dtype)
    if h > w:
        divisor = divisor.T
    return divisor.reshape(divisor_shape)


def global_avg_pool_any(op: nn.GlobalAvgPoolOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Mean over the physical H and W axes, accumulated in float64. Channel padding lanes
    average zeros, so they stay zero."""
    x = inputs[0]
    _, h, w = _nhw_axes(layout_spec(op.input))
    return x.mean(axis=(h, w), keepdims=True, dtype=np.float64).astype(x.dtype)


def _max_pool_into(op: nn.MaxPool2dOp, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    _fold_taps(_max_pool_windows(op, inputs[0]), np.maximum, out)


def _avg_pool_into(op: nn.AvgPool2dOp, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    _average(op, inputs[0], _avg_pool_windows(op, inputs[0]), out)


def _average(op: nn.AvgPool2dOp, x: np.ndarray, windows: np.ndarray, out: np.ndarray) -> None:
    _fold_taps(windows, np.add, out)
    with np.errstate(invalid="ignore", divide="ignore"):
        np.divide(out, _avg_pool_divisor(op, x), out=out)


def _pool_kernel(
    op_type: type[Operation],
    impl: Callable[[Operation, Sequence[np.ndarray]], np.ndarray],
    into: Callable[[Operation, Sequence[np.ndarray], np.ndarray], None] | None,
) -> Kernel:
    """The descriptor of a pooling kernel named after `impl`, prepared with `into` if any."""
    return Kernel(
        impl.__name__,
        op_type,
        "blocked",
        impl,
        accepts=_pool_accepts,
        layouts=any_layouts,
        accepts_layout=_pool_layout,
        accepts_types=functools.partial(
            any_types_reason, shapes=_pool_rank_reason, check=_pool_layout
        ),
        prepare=None if into is None else prepared(into, impl),
    )


KERNELS: tuple[Kernel, ...] = (
    _pool_kernel(nn.MaxPool2dOp, max_pool2d_any, _max_pool_into),
    _pool_kernel(nn.AvgPool2dOp, avg_pool2d_any, _avg_pool_into),
    _pool_kernel(nn.GlobalAvgPoolOp, global_avg_pool_any, None),
)
