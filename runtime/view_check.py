"""What every buffer of a planned function addresses: the view half of the plan checker.

`runtime/plan_check.py`'s `verify_function` calls `check_views` first, so the one verifier
of planned IR (run by `verify-memory-plan`, the interpreter, `nnlayout-translate` and a
generated module's load) also refuses, located at the op, before anything runs:

- a **view that leaves its source** or **lies about what it addresses**. Every memref value
  of the block is followed from its root (an allocation, a `memref.view` of the arena, a
  function argument: one row-major run from its first element) through the views derived
  from it, by what each view op means, as element offsets from its root (offset, shape,
  strides). A `memref.subview` needs static offsets, sizes and strides with offset >= 0,
  size >= 1 and stride >= 1 on every axis, the last element it takes inside the source's
  dimension (`offset + (size - 1) * stride < dim`), and no rank change; a
  `memref.reinterpret_cast` static offset, sizes >= 1 and strides >= 1 whose first and last
  element lie inside the first and last element its source addresses; a `memref.cast` the
  source's shape. Each result type must then address exactly those elements: its shape,
  offset and strides (the strides of axes of size 1 address nothing and may differ) are
  what the op computes, since the runners compute views from the op while kernels and
  passes read the type. Any other op that makes a buffer from a buffer is refused: what it
  addresses cannot be checked. Roots must be row-major (an identity layout).
- **a write to a function argument**: the caller's array, which both runners hand to the
  kernels as it is. An `nn.compute` writing one of its `outs`, a `memref.copy` target or a
  `layout.fill_border` that is an argument or a view of one is refused, unless the
  argument carries the unit attribute `nnlayout.output` in the signature
  (`%out: memref<1x8xf32> {nnlayout.output}`): the function then writes the caller's array
  in place, by contract.

Linear in the number of ops: each op is looked at once, with dictionary lookups.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import DictionaryAttr, MemRefType, NoneAttr
from xdsl.ir import Attribute, Operation, SSAValue

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.layout import FillBorderOp

OUTPUT_ATTR = "nnlayout.output"  # an argument the function may write (the caller's array)


@dataclass(frozen=True)
class _Addressed:
    """The elements a buffer addresses: `offset + sum(index[i] * strides[i])` from the first
    element of its root, for every index inside `shape`."""

    offset: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]

    @property
    def last(self) -> int:
        return self.offset + sum((n - 1) * s for n, s in zip(self.shape, self.strides, strict=True))

    def describe(self) -> str:
        return f"shape {list(self.shape)}, strides {list(self.strides)}, offset {self.offset}"


def _row_major(shape: Sequence[int]) -> tuple[int, ...]:
    strides: list[int] = []
    step = 1
    for size in reversed(shape):
        strides.insert(0, step)
        step *= size
    return tuple(strides)


def _static(op: Operation, value_type: Attribute, what: str) -> tuple[int, ...]:
    if not isinstance(value_type, MemRefType) or any(d < 0 for d in value_type.get_shape()):
        raise DiagnosticError(op, f"{what} must be a statically shaped memref, not {value_type}")
    return tuple(value_type.get_shape())


def _root(op: Operation, value: SSAValue, what: str) -> _Addressed:
    """An allocation, arena view or argument: one row-major run from its first element."""
    shape = _static(op, value.type, what)
    value_type = value.type
    assert isinstance(value_type, MemRefType)
    if not isinstance(value_type.layout, NoneAttr):
        raise DiagnosticError(
            op, f"{what} has type {value_type}; a buffer of its own must be row-major"
        )
    return _Addressed(0, shape, _row_major(shape))


def _type_check(op: Operation, result: SSAValue, derived: _Addressed) -> None:
    """The result type must address what the op does (module doc)."""
    result_type = result.type
    shape = _static(op, result_type, f"the result of {op.name}")
    assert isinstance(result_type, MemRefType)
    strides, offset = result_type.get_strides(), result_type.get_offset()
    if (
        shape != derived.shape
        or strides is None
        or offset != derived.offset
        or any(
            n != 1 and s != want for n, s, want in zip(shape, strides, derived.strides, strict=True)
        )
    ):
        raise DiagnosticError(
            op,
            f"{op.name}: its result type {result_type} does not address what the op does "
            f"({derived.describe()}, in elements of its root buffer)",
        )


def _subview(op: memref.SubviewOp, source: _Addressed) -> _Addressed:
    if len(op.operands) != 1:  # dynamic offsets, sizes or strides
        raise DiagnosticError(
            op, "memref.subview: planned IR needs static offsets, sizes and strides"
        )
    offsets = tuple(op.static_offsets.get_values())
    sizes = tuple(op.static_sizes.get_values())
    steps = tuple(op.static_strides.get_values())
    if not len(offsets) == len(sizes) == len(steps) == len(source.shape):
        raise DiagnosticError(
            op,
            f"memref.subview: {len(offsets)} offsets, {len(sizes)} sizes and "
            f"{len(steps)} strides for a source of rank {len(source.shape)}",
        )
    for axis, (start, size, step, dim) in enumerate(
        zip(offsets, sizes, steps, source.shape, strict=True)
    ):
        problem = (
            f"offset {start}"
            if start < 0
            else f"size {size}"
            if size < 1
            else f"stride {step}"
            if step < 1
            else None
        )
        if problem is not None:
            raise DiagnosticError(
                op,
                f"memref.subview: {problem} on axis {axis}; a view needs offsets >= 0, "
                "sizes >= 1 and strides >= 1",
            )
        if start + (size - 1) * step >= dim:
            raise DiagnosticError(
                op,
                f"memref.subview: axis {axis} takes elements {start} to "
                f"{start + (size - 1) * step} (offset {start}, size {size}, stride {step}) "
                f"of a source dimension of {dim}; a view must stay inside its source",
            )
    return _Addressed(
        source.offset + sum(o * s for o, s in zip(offsets, source.strides, strict=True)),
        sizes,
        tuple(step * s for step, s in zip(steps, source.strides, strict=True)),
    )


def _reinterpret(op: memref.ReinterpretCastOp, source: _Addressed) -> _Addressed:
    if len(op.operands) != 1:  # a dynamic offset, sizes or strides
        raise DiagnosticError(
            op, "memref.reinterpret_cast: planned IR needs static offset, sizes and strides"
        )
    offsets = tuple(op.static_offsets.get_values())
    sizes = tuple(op.static_sizes.get_values())
    steps = tuple(op.static_strides.get_values())
    if len(offsets) != 1 or len(sizes) != len(steps):
        raise DiagnosticError(
            op, "memref.reinterpret_cast: needs one offset and as many sizes as strides"
        )
    if min(sizes, default=1) < 1 or min(steps, default=1) < 1:
        raise DiagnosticError(
            op,
            f"memref.reinterpret_cast: sizes {list(sizes)}, strides {list(steps)}; a view "
            "needs sizes >= 1 and strides >= 1",
        )
    derived = _Addressed(offsets[0], sizes, steps)
    if derived.offset < source.offset or derived.last > source.last:
        raise DiagnosticError(
            op,
            f"memref.reinterpret_cast: addresses elements {derived.offset} to "
            f"{derived.last} of its root buffer, its source only {source.offset} to "
            f"{source.last}; a view must stay inside its source",
        )
    return derived


def _derived(op: Operation, source: _Addressed) -> _Addressed:
    """What the view op `op` of a buffer addressing `source` addresses."""
    if isinstance(op, memref.SubviewOp):
        return _subview(op, source)
    if isinstance(op, memref.ReinterpretCastOp):
        return _reinterpret(op, source)
    if isinstance(op, memref.CastOp):
        return source
    raise DiagnosticError(
        op,
        f"'{op.name}' makes a buffer from a buffer, and the plan checker does not know what "
        "it addresses; planned IR views buffers with memref.view, memref.subview, "
        "memref.reinterpret_cast and memref.cast",
    )


def _outputs(function: func.FuncOp) -> set[int]:
    """The argument numbers the signature marks `nnlayout.output`."""
    if function.arg_attrs is None:
        return set()
    return {
        index
        for index, attrs in enumerate(function.arg_attrs.data)
        if isinstance(attrs, DictionaryAttr) and OUTPUT_ATTR in attrs.data
    }


def _written(op: Operation) -> Sequence[SSAValue]:
    """The buffers `op` writes."""
    if isinstance(op, ComputeOp):
        return op.outs
    if isinstance(op, memref.CopyOp):
        return (op.destination,)
    if isinstance(op, FillBorderOp):
        return (op.buffer,)
    return ()


def _refuse_argument_write(op: Operation, function: func.FuncOp, index: int) -> None:
    arg = function.args[index]
    name = f" (%{arg.name_hint})" if arg.name_hint else ""
    raise DiagnosticError(
        op,
        f"{op.name} writes function argument {index + 1}{name}, the caller's array, which "
        f"the signature does not mark as an output ({{{OUTPUT_ATTR}}})",
    )


def check_views(function: func.FuncOp) -> None:
    """Raises a DiagnosticError at the first view, fill or write of `function`'s block that
    breaks a rule of the module doc."""
    addressed: dict[SSAValue, _Addressed] = {}
    argument_of: dict[SSAValue, int] = {}  # an argument or a view of one -> its number
    outputs = _outputs(function)
    for index, arg in enumerate(function.args):
        if isinstance(arg.type, MemRefType):
            addressed[arg] = _root(function, arg, f"argument {index + 1}")
            argument_of[arg] = index
    for op in function.body.block.ops:
        # (`_written` reads operand segments, slow in xDSL: only for ops using an argument.)
        if any(v in argument_of for v in op.operands):
            for buffer in _written(op):
                index = argument_of.get(buffer)
                if index is not None and index not in outputs:
                    _refuse_argument_write(op, function, index)
        if isinstance(op, memref.AllocOp | memref.ViewOp):
            addressed[op.results[0]] = _root(op, op.results[0], f"the result of {op.name}")
            continue
        sources = [v for v in op.operands if isinstance(v.type, MemRefType)]
        results = [r for r in op.results if isinstance(r.type, MemRefType)]
        if not sources or not results or isinstance(op, func.CallOp):
            continue
        source = addressed.get(sources[0])
        if source is None:
            raise DiagnosticError(
                op, f"{op.name}: its source is not a buffer of this function's block"
            )
        derived = _derived(op, source)
        _type_check(op, results[0], derived)
        addressed[results[0]] = derived
        if (index := argument_of.get(sources[0])) is not None:
            argument_of[results[0]] = index
