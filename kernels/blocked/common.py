"""What the blocked kernels share: the layouts their operands carry, channel-count reasons,
re-zeroing padding lanes, sliding windows over physical arrays, the rules of the kernels that
run in operand 0's layout (`"*"`), and `prepared`, a `Kernel.prepare` writing straight into
the destination."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.ir import Operation, SSAValue

from nnlayout.dialects.kernel_attr import ANY_LAYOUT
from nnlayout.dialects.layout import Block, LayoutSpec, layout_of, storage_of
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.blocked.options import BlockedOptions
from nnlayout.kernels.registry import (
    BindingSession,
    BoundKernel,
    Target,
    carried_layout_refusal,
    one_layout_refusal,
)

Layouts = tuple[tuple[str, ...], tuple[str, ...]]


def layout_spec(value: SSAValue) -> LayoutSpec | None:
    """The layout a value's type carries; None for a plain tensor."""
    return layout_of(value.type)


def blocked_spec(value: SSAValue) -> LayoutSpec | None:
    """The value's layout if it is channel-blocked NCHW{b}c, else None."""
    spec = layout_spec(value)
    if spec is None or spec.dims != ("N", "C", "H", "W", Block("C", spec.block_product("C"))):
        return None
    return spec


def check_blocked(op: Operation) -> None:
    """Fails clearly when a channel-blocked kernel is called on an op whose operand 0 is not
    NCHW{b}c (insert-layouts did not run): the arrays would not line up."""
    if blocked_spec(op.operands[0]) is None:
        raise ValueError(
            f"{op.name}: operand 0 of type {op.operands[0].type} is not channel-blocked "
            "NCHW{b}c; run insert-layouts before calling a blocked kernel"
        )


def channel_reason(what: str, channels: int, target: Target, padding: bool) -> str | None:
    """Why not, where `channels` would need padding to the target's block and padding is
    off."""
    block = BlockedOptions.of(target).block
    if channels % block and not padding:
        return (
            f"{channels} {what} channels are not a multiple of the block {block} and padding is off"
        )
    return None


def rezero_padding(op: Operation, physical: np.ndarray) -> np.ndarray:
    """Zeroes the padding lanes of result 0."""
    spec = layout_spec(op.results[0])
    return physical if spec is None else spec.zero_padding(physical, shape_of(op.results[0]))


def padded_end(size: int, begin: int, out: int, kernel: int, stride: int, dilation: int) -> int:
    """Padding needed after a spatial axis so that all `out` windows fit (this covers the
    explicit end pad where it is used and ceil_mode's overhang past it)."""
    return max(0, (out - 1) * stride + (kernel - 1) * dilation + 1 - size - begin)


def sliding_windows(
    x: np.ndarray,
    axes: tuple[int, int],
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    out_hw: Sequence[int],
    pad_value: float,
) -> np.ndarray:
    """Sliding windows over the spatial axes `axes` (H, W) of physical `x`, padded with
    `pad_value` (pads = [top, left, bottom, right]): the spatial axes become OH and OW in
    place, and the window offsets kH, kW are appended as the last two axes."""
    widths = [(0, 0)] * x.ndim
    for a, axis in enumerate(axes):
        widths[axis] = (
            pads[a],
            padded_end(x.shape[axis], pads[a], out_hw[a], kernel[a], strides[a], dilations[a]),
        )
    if any(begin or end for begin, end in widths):
        x = np.pad(x, widths, constant_values=pad_value)
    extent = [(k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=True)]
    view = sliding_window_view(x, extent, axis=axes)
    index: list[slice] = [slice(None)] * view.ndim
    for a, axis in enumerate(axes):
        index[axis] = slice(0, (out_hw[a] - 1) * strides[a] + 1, strides[a])
        index[x.ndim + a] = slice(None, None, dilations[a])
    return view[tuple(index)]


def layouts_reason(wanted: Sequence[tuple[str, SSAValue, str]]) -> str | None:
    """Why not, where a value of the (what, value, layout) carries another layout than its
    own; None where none does."""
    for what, value, layout in wanted:
        spec = layout_spec(value)
        if spec is None or spec.text != layout:
            return (
                f"{what} in layout '{spec.text if spec else 'plain'}', not {layout} (IR "
                "dispatched by an older nnlayout, or by hand: run select-dispatch and "
                "insert-layouts on the tensor-level program again)"
            )
    return None


def not_one_blocked_layout(op: Operation) -> str:
    """The reason given where input and result are not in one NCHW{b}c."""
    return (
        f"input of type {op.operands[0].type} and result of type {op.results[0].type} are "
        "not both one channel-blocked NCHW{b}c; run insert-layouts before calling a "
        "blocked kernel"
    )


def any_layouts(op: Operation, target: Target) -> Layouts:
    """Every operand and result in operand 0's layout (`"*"`), whatever the target."""
    return (ANY_LAYOUT,) * len(op.operands), (ANY_LAYOUT,) * len(op.results)


def sparse_operand(op: Operation) -> str | None:
    """Why not, where an operand is not a dense array: the result takes operand 0's storage
    ("*"), and a CSR result of hand-written IR (relu of a CSR value) left bufferize a tensor
    without a buffer."""
    for index, operand in enumerate(op.operands):
        if storage_of(operand.type) != "dense":
            return f"operand {index} is stored as {storage_of(operand.type).upper()}"
    return None


def any_dense_layout(op: Operation, spec: LayoutSpec) -> str | None:
    """An `accepts_layout` for math that does not care how lanes are arranged (element-wise,
    a table lookup): any dense layout will do."""
    return None


def dense_operands(op: Operation, target: Target, padding: bool) -> str | None:
    """`sparse_operand` as a kernel's `accepts`."""
    return sparse_operand(op)


def any_types_reason(
    op: Operation,
    shapes: Callable[[Operation], str | None],
    check: Callable[[Operation, LayoutSpec], str | None],
) -> str | None:
    """A `"*"` kernel's `accepts_types`: its shape rules (`shapes`, what its `accepts` asks),
    every operand and result in operand 0's layout, and `check` (its `accepts_layout`)
    agreeing to that layout."""
    return (
        shapes(op)
        or one_layout_refusal(op, range(len(op.operands)))
        or carried_layout_refusal(op, check)
    )


# `Kernel.prepare` for the kernels whose math numpy can write into a destination (ufuncs'
# `out=`): the very bits of the unprepared kernel (the same numpy operations in the same order,
# except for relu and clip, see `elementwise._bounded`), without allocating the result and
# copying it. The destination may be a strided view (halo interior, concat slot) and, for
# in-place kernels, the memory of operand 0: each computation reads its inputs only before or
# in its first numpy call (numpy makes one call safe for any overlap), and afterwards reads
# only `out` (and temporaries). tests/kernels/test_prepared_kernels.py checks this.
@functools.lru_cache(maxsize=256)
def _mask(layout: str, shape: tuple[int, ...]) -> np.ndarray:
    mask = LayoutSpec.parse(layout).padding_mask(shape)
    mask.flags.writeable = False
    return mask


def result_padding_mask(op: Operation) -> np.ndarray | None:
    """The padding lanes `rezero_padding` zeroes (None when there are none), computed once per
    layout and shape."""
    spec, shape = layout_spec(op.results[0]), tuple(shape_of(op.results[0]))
    return None if spec is None or not spec.padding_elements(shape) else _mask(spec.text, shape)


def prepared(
    compute: Callable[[Operation, Sequence[np.ndarray], np.ndarray], None],
    impl: Callable[[Operation, Sequence[np.ndarray]], np.ndarray],
    rezero: bool = True,
) -> Callable[[Operation, BindingSession | None], BoundKernel]:
    """`prepare` for a kernel whose `compute(op, inputs, out)` writes its result into `out`,
    followed by `rezero_padding`'s re-zeroing; inputs of another dtype than `out` take `impl`."""

    def prepare(op: Operation, session: BindingSession | None) -> BoundKernel:
        mask = result_padding_mask(op) if rezero else None

        def bound(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
            if any(x.dtype != out.dtype for x in inputs):
                out[...] = impl(op, inputs)
                return
            compute(op, inputs, out)
            if mask is not None:
                np.copyto(out, 0, where=mask)

        return bound

    return prepare
