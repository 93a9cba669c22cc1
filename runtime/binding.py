"""Binding each `nn.compute` of a planned program to its kernel: the same kernel for each op,
the same pad-free clone of a halo'd op, in the interpreter and the generated module."""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from xdsl.ir import Block, Operation, SSAValue

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import (
    ReorderOp,
    encoding_name,
    with_halo,
)
from nnlayout.dialects.nn import ConstantOp, i64_array
from nnlayout.dialects.weights import WeightsError, constant_value
from nnlayout.kernels.providers import registry
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.registry import (
    BindingRefused,
    BindingSession,
    BindsBuffers,
    FixedCall,
    Implementation,
    Kernel,
    resolve_layouts,
)
from nnlayout.kernels.values import apply_kernel, located_refusal, to_logical, to_physical
from nnlayout.runtime.values import BoundCompute, bind_reorder

if TYPE_CHECKING:
    from nnlayout.kernels.values import RuntimeValue


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
    session: BindingSession | None = None,
) -> BoundCompute:
    """`op` bound to its kernel once, to be called on every run with its `ins` and `outs`
    values. The work a kernel can do per op ahead of time (its `prepare`: a oneDNN primitive,
    a scratchpad, a reference kernel's attributes) is done here; other kernels run through
    `apply_kernel` on each call. `session` holds what the kernels bound so far for the same
    run order said about their results, and is passed to the kernel's `prepare`; binding `op`
    again forgets what its previous kernel said."""
    if session is not None:
        session.forget(op)
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
        try:
            prepared = kernel.prepare(inner, session)
        except BindingRefused as error:
            raise located_refusal(inner, error) from None
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
    magnitude: how the compiled program is judged against its oracle (<= 1e-4 passes).
    Infinite where the two differ in shape, in where their NaN are, in their infinities, or
    at all for masks and indices (compared exactly); NaN in both counts as agreement."""
    worst = 0.0
    for want, got in zip(expected, actual, strict=True):
        want, got = np.asarray(want), np.asarray(got)
        if want.shape != got.shape:
            return math.inf
        if want.dtype.kind in "biu" or got.dtype.kind in "biu":
            if not np.array_equal(want, got):
                return math.inf
            continue
        finite = np.isfinite(want)
        if not np.array_equal(np.isnan(want), np.isnan(got)) or not np.array_equal(
            want[~finite & ~np.isnan(want)], got[~finite & ~np.isnan(want)]
        ):
            return math.inf
        want, got = want[finite].astype(np.float64), got[finite].astype(np.float64)
        scale = max(float(np.abs(want).max(initial=0.0)), float(np.finfo(np.float32).tiny))
        worst = max(worst, float(np.abs(got - want).max(initial=0.0)) / scale)
    return worst


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
    owners: dict[int, tuple[Operation, weakref.ref[np.ndarray]]] = {}  # first op owning each
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
                owner = _owner(value)
                known = owners.get(id(owner))
                if known is None or known[1]() is not owner:  # not one freed since, same id
                    owners[id(owner)] = (op, weakref.ref(owner))
            values[op.results[0]] = value
            for operand in op.operands:
                readers[operand] -= 1
                if not readers[operand]:
                    del values[operand]
    return [_own_bytes(root, values[root.results[0]], owners) for root in roots]


def _owner(array: np.ndarray) -> np.ndarray:
    """The array whose memory `array` views (itself where it owns its data)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _own_bytes(
    root: Operation,
    value: RuntimeValue,
    owners: Mapping[int, tuple[Operation, weakref.ref[np.ndarray]]],
) -> RuntimeValue:
    """`value`, copied where it views another value's memory (a reshape, slice or transpose
    the reference kernels return as a view of their operand): each constant the program
    holds then takes its own bytes, as plan-memory counts them (`transforms/
    constant_bytes.py`), and a plain array freed at load frees them."""
    if not isinstance(value, np.ndarray) or owners[id(_owner(value))][0] is root:
        return value
    copied = value.copy()
    copied.flags.writeable = False
    return copied
