"""What the two back ends share at run time: the interpreter and the generated numpy module
(`lowering/to_numpy.py`) run the same planned IR through these functions, so that generated
code computes exactly what the interpreter, the oracle, computes: the same kernel for each
op, the same pad-free clone of a halo'd op, the same packed constants, the same views.

Run-time representation: a value whose tensor type carries `#layout.layout<...>` is its
*physical* array (`LayoutSpec.pack`, zero padding); a `#layout.storage<"csr">` value is a
`scipy.sparse.csr_array`; any other value is its logical array.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type, TensorType, i8
from xdsl.ir import Attribute, Block, Operation, SSAValue

from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import (
    BUFFER_ALIGNMENT,
    ReorderOp,
    encoding_name,
    layout_of,
    storage_of,
    with_halo,
)
from nnlayout.dialects.nn import ConstantOp, i64_array
from nnlayout.dialects.weights import WeightsError, constant_value
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.registry import (
    PREPARED_IN_SESSION,
    BindingRefused,
    BindsBuffers,
    FixedCall,
    Implementation,
    Kernel,
    registry,
    resolve_layouts,
)
from nnlayout.tools.driver import DiagnosticError

if TYPE_CHECKING:
    from scipy.sparse import csr_array

    RuntimeValue = np.ndarray | csr_array  # a physical array, or the CSR array of a value

DTYPES: dict[type[Attribute], np.dtype] = {
    Float16Type: np.dtype(np.float16),
    Float32Type: np.dtype(np.float32),
    Float64Type: np.dtype(np.float64),
}

# `ins`, `outs` -> None: an `nn.compute` bound to its kernel, writing its result into outs[0].
BoundCompute = Callable[[Sequence["RuntimeValue"], Sequence[np.ndarray]], None]


# ------------------------------------------------------------- representation
def to_physical(array: np.ndarray, value_type: Attribute) -> RuntimeValue:
    """The run-time value of a logical array whose type is `value_type`."""
    if storage_of(value_type) == "csr":
        from scipy.sparse import csr_array  # imported on first use: it takes 0.2 s

        return csr_array(array)
    spec = layout_of(value_type)
    return array if spec is None or spec.is_identity else spec.pack(array)


def to_logical(value: RuntimeValue, value_type: Attribute) -> np.ndarray:
    """The logical array of a run-time value whose type is `value_type`."""
    if storage_of(value_type) == "csr":
        return value.toarray()
    spec = layout_of(value_type)
    if spec is None or spec.is_identity:
        return value
    assert isinstance(value_type, TensorType)
    return spec.unpack(value, value_type.get_shape())


# ------------------------------------------------------------------ buffers
def element_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype of a buffer's elements; i8 is the byte type of the arena."""
    return np.dtype(np.uint8) if element_type == i8 else DTYPES[type(element_type)]


def aligned_empty(nbytes: int) -> np.ndarray:
    """`numpy.empty(nbytes, numpy.uint8)` starting at a 64-byte boundary, as `memref.alloc`
    promises (oneDNN and SIMD loads want it)."""
    raw = np.empty(nbytes + BUFFER_ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % BUFFER_ALIGNMENT
    return raw[start : start + nbytes]


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


# ------------------------------------------------------------------ constants
def materialize_constant(op: ConstantOp, weights: Mapping[str, np.ndarray]) -> RuntimeValue:
    """The run-time value of a constant (packed into its layout), made read-only because it
    is shared by every run. `weights` holds the arrays of the module's weights file."""
    try:
        array = constant_value(op, weights)
    except WeightsError as error:
        raise DiagnosticError(op, str(error)) from None
    value = to_physical(array, op.output.type)
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    return value


def evaluate_constants(
    roots: Sequence[Operation], weights: Callable[[], Mapping[str, np.ndarray]]
) -> list[RuntimeValue]:
    """The run-time values of the constant expressions `roots` (see
    `dialects/constant_expressions.py`), read-only like materialised constants. Each op they
    depend on is evaluated once, in operand order: constants materialised, reorders packed,
    other ops run by their reference kernel on logical arrays (what they mean, whatever
    kernel a target has) with the result packed into its type's layout; an intermediate
    value is dropped after its last use. `weights` loads the weights file, called only when
    an external constant is met."""
    order: list[Operation] = []  # every op the roots depend on, operands first
    seen: set[Operation] = set()
    pending: list[tuple[Operation, bool]] = [(root, False) for root in reversed(roots)]
    while pending:
        op, operands_done = pending.pop()
        if operands_done:
            order.append(op)
        elif op not in seen:
            seen.add(op)
            pending.append((op, True))
            for operand in op.operands:
                assert isinstance(operand.owner, Operation)  # constant expressions' are
                pending.append((operand.owner, False))
    readers: dict[SSAValue, int] = {}  # the root results are read by the caller
    for value in (*(v for op in order for v in op.operands), *(r.results[0] for r in roots)):
        readers[value] = readers.get(value, 0) + 1
    values: dict[SSAValue, RuntimeValue] = {}
    with np.errstate(all="ignore"):  # IEEE results (sqrt(-1) is nan), as at run time
        for op in order:
            operands = [values[v] for v in op.operands]
            if isinstance(op, ConstantOp):
                try:
                    arrays = weights() if op.external is not None else {}
                except WeightsError as error:
                    raise DiagnosticError(op, str(error)) from None
                value = materialize_constant(op, arrays)
            elif isinstance(op, ReorderOp):
                value = to_physical(to_logical(operands[0], op.input.type), op.output.type)
            else:
                found = kernel_for(op, REFERENCE_KERNELS, use_chosen=False)
                if found is None:
                    raise DiagnosticError(op, f"no reference kernel evaluates '{op.name}'")
                value = apply_kernel(op, found[1], False, operands)
            if isinstance(value, np.ndarray):
                value.flags.writeable = False
            values[op.results[0]] = value
            for operand in op.operands:
                readers[operand] -= 1
                if not readers[operand]:
                    del values[operand]
    return [values[root.results[0]] for root in roots]


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
# iterates in the destination's order, at about 2.5 ns per element for runs of 3 (plain ->
# NHWC images), 5x slower than 3 copies along the source's runs.
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


# ------------------------------------------------------------------ kernels
def chosen_kernel(op: Operation) -> Kernel | None:
    """The registry kernel `select-dispatch` chose for `op`, once the op's operand and result
    types are in the layouts that kernel declared (i.e. after `insert-layouts`); else None."""
    chosen = kernel_of(op)
    if chosen is None:
        return None
    first = encoding_name(op.operands[0].type) if op.operands else ""
    wanted = resolve_layouts(chosen.operands, first)
    produced = resolve_layouts(chosen.results, first)
    if [encoding_name(v.type) for v in op.operands] != list(wanted) or (
        [encoding_name(v.type) for v in op.results] != list(produced)
    ):
        return None
    try:
        kernel = registry().kernel_for(op, chosen.kernel_name.data)
    except KeyError as error:
        raise DiagnosticError(op, str(error.args[0])) from None
    if (reason := kernel.binding_refusal(op)) is not None:
        raise DiagnosticError(op, f'#nn.kernel<"{kernel.name}">: {reason}')
    declared = kernel.in_place_for(op)
    if chosen.in_place_operand not in (None, declared):
        # The memory plan may have put the result over that operand, which this kernel
        # reads while it writes (a pooling window): wrong numbers.
        raise DiagnosticError(
            op,
            f'#nn.kernel<"{kernel.name}">: in_place = '
            f"{chosen.in_place_operand}, but the kernel writes over "
            f"{'no operand' if declared is None else f'operand {declared}'}",
        )
    return kernel


def kernel_for(
    op: Operation,
    fallback: Mapping[type[Operation], Implementation] = (REFERENCE_KERNELS),
    use_chosen: bool = True,
) -> tuple[Kernel | None, Implementation, bool] | None:
    """The kernel that computes `op`: (registry kernel or None, implementation, whether it
    works on physical values). That is the chosen kernel when `chosen_kernel` finds it, else
    the `fallback` kernel on logical arrays, which computes the same function; None when
    there is neither."""
    kernel = chosen_kernel(op) if use_chosen else None
    if kernel is not None:
        return kernel, kernel.impl, True
    implementation = fallback.get(type(op))
    return None if implementation is None else (None, implementation, False)


def _refused(op: Operation, error: BindingRefused) -> DiagnosticError:
    """A kernel's refusal to compute `op` as typed, located at `op`."""
    chosen = kernel_of(op)
    name = "" if chosen is None else f'#nn.kernel<"{chosen.kernel_name.data}">: '
    return DiagnosticError(op, f"{name}{error}")


def apply_kernel(
    op: Operation,
    implementation: Implementation,
    on_physical: bool,
    operands: Sequence[RuntimeValue],
) -> RuntimeValue:
    """Runs `implementation` on `op`'s operand values (unpacked first unless it works on
    physical values); returns the result in the result type's layout, checked against it."""
    result_type = op.results[0].type
    assert isinstance(result_type, TensorType)
    if on_physical:
        try:
            result = implementation(op, operands)
        except BindingRefused as error:
            raise _refused(op, error) from None
        spec = layout_of(result_type)
        shape = (
            result_type.get_shape()
            if spec is None
            else spec.physical_shape(result_type.get_shape())
        )
    else:
        result = implementation(
            op,
            [to_logical(v, operand.type) for v, operand in zip(operands, op.operands, strict=True)],
        )
        shape = result_type.get_shape()
    expected = (tuple(shape), DTYPES.get(type(result_type.element_type)))
    if (result.shape, result.dtype) != expected:
        raise DiagnosticError(
            op,
            f"kernel returned {list(result.shape)} {result.dtype}, "
            f"but the result type is {result_type}",
        )
    return result if on_physical else to_physical(result, result_type)


def without_padding(op: ComputeOp) -> Operation:
    """The body's op of a halo'd `nn.compute`, reading the halo-padded input: its input is
    the padded tensor and its own pads are zero, which computes the same values without a
    pad copy. A detached clone (in a block of its own); make it once per op."""
    inner = op.inner
    halo = op.halo_values
    assert halo is not None
    padded = with_halo(inner.operands[0].type, halo)
    block = Block(arg_types=[padded, *(v.type for v in inner.operands[1:])])
    clone = inner.clone(value_mapper=dict(zip(inner.operands, block.args, strict=True)))
    clone.properties["pads"] = i64_array((0, 0, 0, 0))
    block.add_op(clone)
    return clone


def bind_compute(
    op: ComputeOp,
    fallback: Mapping[type[Operation], Implementation] = (REFERENCE_KERNELS),
    use_chosen: bool = True,
    session: dict[Operation, Any] | None = None,
) -> BoundCompute:
    """`op` bound to its kernel once, to be called on every run with its `ins` and `outs`
    values. The work a kernel can do per op ahead of time (its `prepare`: a oneDNN primitive,
    a scratchpad, a reference kernel's attributes) is done here; other kernels run through
    `apply_kernel` on each call. `session` holds what the kernels bound so far for the same
    run order said about their results (`PREPARED_IN_SESSION`); binding `op` again forgets
    what its previous kernel said."""
    if session is not None:
        session.pop(op, None)
    inner = without_padding(op) if op.halo is not None else op.inner
    if len(inner.results) != 1:
        raise DiagnosticError(
            op, f"'{inner.name}' has {len(inner.results)} results; kernels compute one"
        )
    if isinstance(inner, ReorderOp):
        return bind_reorder(inner.input.type, inner.output.type)
    found = kernel_for(inner, fallback, use_chosen)
    if found is None:
        raise DiagnosticError(inner, f"no kernel can run '{inner.name}'")
    kernel, implementation, on_physical = found
    if kernel is not None and kernel.prepare is not None:
        token = PREPARED_IN_SESSION.set(session)
        try:
            prepared = kernel.prepare(inner)
        except BindingRefused as error:
            raise _refused(inner, error) from None
        finally:
            PREPARED_IN_SESSION.reset(token)
        if isinstance(prepared, BindsBuffers):
            return _BindsBuffers(prepared)
        return lambda ins, outs: prepared(ins, outs[0])

    def run(ins: Sequence[RuntimeValue], outs: Sequence[np.ndarray]) -> None:
        outs[0][...] = apply_kernel(inner, implementation, on_physical, ins)

    return run


class _BindsBuffers:
    """An op whose prepared kernel can be bound to its buffers (`on_buffers`)."""

    __slots__ = ("prepared",)

    def __init__(self, prepared: BindsBuffers):
        self.prepared = prepared

    def __call__(self, ins: Sequence[RuntimeValue], outs: Sequence[np.ndarray]) -> None:
        self.prepared(ins, outs[0])


def on_buffers(
    bound: BoundCompute, ins: Sequence[RuntimeValue], outs: Sequence[np.ndarray]
) -> FixedCall:
    """`bound(ins, outs)` as a call without arguments, for arrays passed on every call (a
    generated module's arena views): kernels that can (`BindsBuffers`) check what depends on
    the arrays alone once, here."""
    if isinstance(bound, _BindsBuffers):
        return bound.prepared.on(ins, outs[0])
    return partial(bound, ins, outs)


def relative_difference(expected: Sequence[np.ndarray], actual: Sequence[np.ndarray]) -> float:
    """The largest |actual - expected| of any result, relative to that result's largest
    magnitude: how the compiled program is judged against its oracle (<= 1e-4 passes)."""
    worst = 0.0
    for want, got in zip(expected, actual, strict=True):
        scale = max(float(np.abs(want).max()), float(np.finfo(np.float32).tiny))
        worst = max(worst, float(np.abs(got - want).max()) / scale)
    return worst
