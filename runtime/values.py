"""What the two back ends share for values at run time: buffers, constants and reorders.

The interpreter and the generated numpy module (`lowering/to_numpy.py`) run the same planned
IR through these functions and `runtime/binding.py`, so that generated code computes exactly
what the interpreter, the oracle, computes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType, NoneAttr, StridedLayoutAttr, TensorType
from xdsl.ir import Attribute

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects.layout import (
    BUFFER_ALIGNMENT,
    layout_of,
    storage_of,
)
from nnlayout.kernels.values import to_logical, to_physical

if TYPE_CHECKING:
    from nnlayout.kernels.values import RuntimeValue


# `ins`, `outs` -> None: an `nn.compute` bound to its kernel, writing its result into outs[0].
BoundCompute = Callable[[Sequence["RuntimeValue"], Sequence[np.ndarray]], None]


# ------------------------------------------------------------------ buffers
def aligned_empty(nbytes: int) -> np.ndarray:
    """`numpy.empty(nbytes, numpy.uint8)` starting at a 64-byte boundary, as `memref.alloc`
    promises (oneDNN and SIMD loads want it)."""
    raw = np.empty(nbytes + BUFFER_ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % BUFFER_ALIGNMENT
    return raw[start : start + nbytes]


def row_major(shape: Sequence[int]) -> list[int]:
    """Row-major strides (in elements) of `shape`."""
    strides: list[int] = []
    step = 1
    for size in reversed(shape):
        strides.insert(0, step)
        step *= size
    return strides


def is_row_major(shape: Sequence[int], strides: Sequence[int | None]) -> bool:
    """Whether elements of `shape` at `strides` lie in one row-major run (the strides of
    axes of size 1 do not matter)."""
    return all(
        size == 1 or stride == want
        for size, stride, want in zip(shape, strides, row_major(shape), strict=True)
    )


def memref_offset(source_type: MemRefType) -> int:
    """The offset (in elements) of a statically strided memref type."""
    layout = source_type.layout
    if isinstance(layout, NoneAttr):
        return 0
    assert isinstance(layout, StridedLayoutAttr)
    offset = layout.get_offset()
    assert isinstance(offset, int)
    return offset


def reinterpreted_shape(op: memref.ReinterpretCastOp) -> tuple[int, ...] | None:
    """The shape of a `memref.reinterpret_cast` that reshapes a row-major buffer in place (its
    source's offset, row-major strides): what the runtimes run; None for any other."""
    source_type, result_type = op.source.type, op.result.type
    if not isinstance(source_type, MemRefType) or not isinstance(result_type, MemRefType):
        return None
    shape = tuple(result_type.get_shape())
    offsets = tuple(op.static_offsets.get_values())
    if (
        op.offsets
        or op.sizes
        or op.strides
        or tuple(op.static_sizes.get_values()) != shape
        or list(op.static_strides.get_values()) != row_major(shape)
        or offsets != (memref_offset(source_type),)
        or not is_row_major(source_type.get_shape(), source_type.get_strides())
    ):
        return None
    return shape


def reinterpret(source: np.ndarray, op: memref.ReinterpretCastOp) -> np.ndarray:
    """The numpy view a `memref.reinterpret_cast` reshaping `source` in place describes (see
    `reinterpreted_shape`; an aliasing view where `source` is contiguous, as bufferize's
    buffers are)."""
    shape = reinterpreted_shape(op)
    if shape is None:
        raise DiagnosticError(
            op,
            "only a memref.reinterpret_cast that reshapes a row-major buffer (its offset, "
            "row-major strides) can be run",
        )
    return source.reshape(shape)


def subview_slices(op: memref.SubviewOp) -> tuple[slice, ...]:
    """The numpy index of the static `memref.subview` `op` (an aliasing view)."""
    return tuple(
        slice(o, o + n * s, s)
        for o, n, s in zip(
            op.static_offsets.get_values(),
            op.static_sizes.get_values(),
            op.static_strides.get_values(),
            strict=True,
        )
    )


def fill_border(
    buffer: np.ndarray, axes: tuple[int, int], halo: tuple[int, int, int, int], value: float
) -> None:
    """Writes `value` into the halo border (top, left, bottom, right) of `buffer`, whose
    spatial axes are `axes`: what `layout.fill_border` does."""
    top, left, bottom, right = halo
    index: list[slice] = [slice(None)] * buffer.ndim
    for axis, before, after in ((axes[0], top, bottom), (axes[1], left, right)):
        size = buffer.shape[axis]
        for window in (slice(0, before), slice(size - after, size)):
            index[axis] = window
            buffer[tuple(index)] = value
        index[axis] = slice(None)


# ------------------------------------------------------------------ reorders
# A reorder moves each element of a logical axis from one mixed-radix position to another:
# a layout splits axis `a` into physical dimensions, each step of which moves `unit` logical
# elements (NCHW8c: C/8 blocks of unit 8, then 8 lanes of unit 1). Splitting every axis at
# the units of both layouts gives *digits* (axis, unit) that each layout holds whole, so one
# strided numpy copy moves a box of them: the source viewed as digits, transposed into the
# destination's digit order, copied into the destination viewed as digits. A logical size
# that is no multiple of a unit takes a few boxes; destination padding lanes are zeroed.
Digit = tuple[int, int]  # (logical axis, unit)
Box = tuple[tuple[int, int], ...]  # [start, stop) of each digit of one axis, outermost first
# A destination's innermost digit along which the source is strided is copied one index at a
# time when it is this short and each copy moves at least _LOOP_ELEMENTS elements: numpy
# iterates in the destination's order, element by element for short runs (plain -> NHWC
# images), much slower than a few copies along the source's runs.
_LOOP_EXTENT, _LOOP_ELEMENTS = 8, 4096


class _Piece(NamedTuple):
    """A physical dimension: steps of `unit` elements along logical `axis`; `whole` for the
    dimension of the axis itself (its outer blocks), whose extent bounds no digit."""

    axis: int
    unit: int
    extent: int
    whole: bool


def _pieces(value_type: TensorType) -> list[_Piece]:
    """The physical dimensions of a dense tensor type, in memory order."""
    shape = value_type.get_shape()
    spec = layout_of(value_type)
    if spec is None:
        return [_Piece(axis, 1, size, True) for axis, size in enumerate(shape)]
    index = {axis: a for a, axis in enumerate(spec.logical_axes)}
    inner = {axis: spec.block_product(axis) for axis in index}  # unit below the blocks seen
    pieces = []
    for dim, extent in zip(spec.dims, spec.physical_shape(shape), strict=True):
        if isinstance(dim, str):
            pieces.append(_Piece(index[dim], spec.block_product(dim), extent, True))
        else:
            inner[dim.axis] //= dim.factor
            pieces.append(_Piece(index[dim.axis], inner[dim.axis], extent, False))
    return pieces


def _boxes(size: int, units: Sequence[int]) -> list[Box]:
    """[0, size) of one logical axis as boxes of its digits (`units` descending, the last 1;
    the outermost digit is unbounded): in each, outer digits fixed, then one range, then
    whole inner digits, so that every physical dimension takes one slice of it."""
    unit, lower = units[0], units[1:]
    if not lower:
        return [((0, size),)]
    whole, rest = divmod(size, unit)
    boxes: list[Box] = []
    if whole:
        boxes.append(
            ((0, whole), *((0, outer // inner) for outer, inner in itertools.pairwise(units)))
        )
    if rest:
        boxes += [((whole, whole + 1), *box) for box in _boxes(rest, lower)]
    return boxes


class _BoxView(NamedTuple):
    """A box in an array: `array[index]` (None: all of it) reshaped to `shape` has the
    box's `digits`, outermost first (digits of extent 1 dropped)."""

    index: tuple[slice, ...] | None
    shape: tuple[int, ...]
    digits: list[Digit]


def _box_view(
    pieces: Sequence[_Piece], units: Sequence[Sequence[int]], box: Sequence[Box]
) -> _BoxView:
    """Where a box (one per logical axis) lies in an array of `pieces`: one slice of each
    physical dimension."""
    slices, shape, digits = [], [], []
    for axis, unit, extent, whole in pieces:
        offset, length = 0, 1
        for digit_unit, (begin, end) in zip(units[axis], box[axis], strict=True):
            if digit_unit >= unit and (whole or digit_unit < unit * extent):
                offset += begin * (digit_unit // unit)
                length *= end - begin
                if end - begin > 1:
                    shape.append(end - begin)
                    digits.append((axis, digit_unit))
        slices.append(slice(offset, offset + length))
    everything = all(
        s.start == 0 and s.stop == p.extent for s, p in zip(slices, pieces, strict=True)
    )
    return _BoxView(None if everything else tuple(slices), tuple(shape), digits)


Reorder = Callable[[np.ndarray, np.ndarray], None]


def _copy_box(source: _BoxView, target: _BoxView) -> Reorder:
    """Copies one box: the source's digits transposed into the destination's order, the
    destination's innermost digit one index at a time when it is short (see _LOOP_EXTENT)."""
    order = tuple(source.digits.index(d) for d in target.digits)
    identity = order == tuple(range(len(order)))
    short = target.shape[-1] if order and order[-1] != len(order) - 1 else 0
    loop = (
        short
        if 1 < short <= _LOOP_EXTENT and (math.prod(target.shape) >= short * _LOOP_ELEMENTS)
        else 0
    )

    def move(x: np.ndarray, out: np.ndarray) -> None:
        moved = (x if source.index is None else x[source.index]).reshape(source.shape)
        if not identity:
            moved = moved.transpose(order)
        # A reshape that only splits axes and drops 1s: a view of `out`, whatever its strides.
        into = (out if target.index is None else out[target.index]).reshape(target.shape)
        if loop:
            for k in range(loop):
                np.copyto(into[..., k], moved[..., k])
        else:
            np.copyto(into, moved)

    return move


def reorder_into(source: TensorType, target: TensorType) -> Reorder | None:
    """`reorder(x, out)`, writing dense `x` of type `source` into `out` (any strides) in
    `target`'s layout, as `to_physical(to_logical(x))` does; None when the two layouts split
    an axis at units that do not divide each other (8c and 12c)."""
    pieces = [_pieces(source), _pieces(target)]
    shape = source.get_shape()
    units: list[list[int]] = []
    for axis in range(len(shape)):
        found = sorted(
            {p.unit for side in pieces for p in side if p.axis == axis} | {1}, reverse=True
        )
        if any(outer % inner for outer, inner in itertools.pairwise(found)):
            return None
        units.append(found)
    moves = [
        _copy_box(_box_view(pieces[0], units, box), _box_view(pieces[1], units, box))
        for box in itertools.product(*map(_boxes, shape, units))
    ]
    # Padding lanes are zeroed by zeroing all of `out` first: a memset is several times
    # faster than filling lanes strided between the data (5 of 8 for a 3-channel image).
    padded = any(p.unit * p.extent > shape[p.axis] for p in pieces[1] if p.whole)

    def reorder(x: np.ndarray, out: np.ndarray) -> None:
        if padded:
            out.fill(0)
        for move in moves:
            move(x, out)

    return reorder


def bind_reorder(source: Attribute, target: Attribute) -> BoundCompute:
    """A `layout.reorder` from type `source` to `target`, bound once."""
    dense = (
        isinstance(source, TensorType)
        and isinstance(target, TensorType)
        and "csr" not in (storage_of(source), storage_of(target))
    )
    moved = reorder_into(source, target) if dense else None
    if moved is None:

        def reorder(ins: Sequence[RuntimeValue], outs: Sequence[np.ndarray]) -> None:
            outs[0][...] = to_physical(to_logical(ins[0], source), target)

        return reorder
    return lambda ins, outs: moved(ins[0], outs[0])
