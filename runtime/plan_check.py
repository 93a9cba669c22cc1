"""`verify-memory-plan`: an independent check that a memory plan never lets two buffers live at
the same time share arena bytes (invariant 3 of DESIGN.md).

It reads only the planned IR and shares no code with `plan-memory`, so that a bug in the
planner's liveness or placement cannot hide itself. For every `memref.view` of a
`memref.alloc` (the arena) in a function's block it recomputes

- the bytes it covers, `[offset, offset + size)`, from its constant offset and result type,
  and fails if they leave the arena or the offset breaks the arena's alignment;
- the ops during which it is live: from the first to the last op in the block that uses the
  view or a view derived from it (`memref.subview`, `memref.cast`, ...). An op that writes
  the whole view (as an `nn.compute` result or a `memref.copy` target), or a
  `layout.fill_border` of it followed by a write of its interior (a halo'd buffer), starts a
  new value in it: after `cse` merges identical views of two buffers, each keeps its own
  live range. (A plan checked after `cse` is checked as the merged IR reads; two buffers
  wrongly sharing bytes that `cse` merged into one view are only told apart before it, as
  `default-pipeline{verify=true}` does.)

A view of anything but an arena (a view of a view or of an argument) is refused: its bytes
cannot be checked. A view used after a `memref.dealloc` of its arena is an error. Two views
live at a common op whose bytes intersect are an error, unless they are an in-place pair the
consumer's kernel allows: identical bytes, live together at exactly one op, which is
an `nn.compute` reading the first view as `ins[i]` and writing the second as an `outs`, whose
wrapped op's kernel says `in_place = i`. Errors are located at the offending view.

A function's `nnlayout.arena_bytes` must be the bytes its arenas allocate: reports and
benchmarks read it, so a stale or edited figure is refused at the function.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.ir import Block, Operation, SSAValue

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import FillBorderOp
from nnlayout.dialects.plan import ARENA_BYTES, is_arena
from nnlayout.runtime.view_check import check_views

_VIEW_LIKE = (
    memref.SubviewOp,
    memref.CastOp,
    memref.ReinterpretCastOp,
    memref.CollapseShapeOp,
    memref.ExpandShapeOp,
)


@dataclass(frozen=True)
class _Placed:
    """A view of the arena: its op, byte range and the block positions where it is live."""

    op: memref.ViewOp
    begin: int
    end: int
    first: int
    last: int

    def describe(self) -> str:
        name = self.op.result.name_hint or "view"
        return (
            f"'%{name}' (bytes [{self.begin}, {self.end}), live from op {self.first} "
            f"to op {self.last})"
        )


def _constant(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


# How an op touches a view (through the view itself or views derived from it).
_READS, _WRITES_WHOLE, _FILLS_BORDER, _WRITES_INTERIOR = "reads", "whole", "border", "interior"


def _touch(user: Operation, view: SSAValue, family: set[SSAValue]) -> str:
    """`_WRITES_WHOLE`: `user` overwrites all of `view` without reading it (an nn.compute
    result, a memref.copy target); `_FILLS_BORDER`: a layout.fill_border of `view`;
    `_WRITES_INTERIOR`: an nn.compute writes a view derived from it (a halo'd buffer's
    interior) without reading it; otherwise `_READS` (any other use may read)."""
    if isinstance(user, ComputeOp) and not family.intersection(user.ins):
        if view in user.outs:
            return _WRITES_WHOLE
        if family.intersection(user.outs):
            return _WRITES_INTERIOR
    if isinstance(user, FillBorderOp) and user.buffer is view:
        return _FILLS_BORDER
    if isinstance(user, memref.CopyOp) and user.destination is view and user.source not in family:
        return _WRITES_WHOLE
    return _READS


def _live_ranges(
    view: memref.ViewOp, block: Block, position: dict[Operation, int]
) -> list[tuple[int, int]]:
    """The ranges of block positions in which the view holds a value some op still reads.
    A new value starts where an op writes the whole view, or where its border is filled and
    the next op to touch it writes its interior (bufferize's halo'd buffers)."""
    family, users, pending = {view.result}, set(), [view.result]
    while pending:
        for use in pending.pop().uses:
            user = block.find_ancestor_op_in_block(use.operation)
            if user is None:
                raise DiagnosticError(
                    use.operation,
                    "a view of the arena is used outside "
                    "the function's block; cannot check its live range",
                )
            if isinstance(user, _VIEW_LIKE):
                family.update(user.results)
                pending.extend(user.results)
            else:
                users.add(user)
    touches = sorted((position[user], _touch(user, view.result, family)) for user in users)
    ranges: list[tuple[int, int]] = []
    for index, (at, touch) in enumerate(touches):
        following = touches[index + 1][1] if index + 1 < len(touches) else None
        if (
            not ranges
            or touch == _WRITES_WHOLE
            or (touch == _FILLS_BORDER and following == _WRITES_INTERIOR)
        ):
            ranges.append((at, at))
        else:
            ranges[-1] = (ranges[-1][0], at)
    return ranges or [(position[view], position[view])]


def _placed(
    view: memref.ViewOp, arena: memref.AllocOp, block: Block, position: dict[Operation, int]
) -> list[_Placed]:
    arena_type, view_type = arena.memref.type, view.result.type
    assert isinstance(arena_type, MemRefType) and isinstance(view_type, MemRefType)
    offset = _constant(view.byte_shift)
    if offset is None or view.sizes or any(d < 0 for d in view_type.get_shape()):
        raise DiagnosticError(
            view, "the view's offset and sizes must be constants for its plan to be checked"
        )
    width = max(1, getattr(view_type.element_type, "bitwidth", 8) // 8)
    size = math.prod(view_type.get_shape()) * width
    arena_size = arena_type.get_shape()[0]
    placed = [
        _Placed(view, offset, offset + size, first, last)
        for first, last in _live_ranges(view, block, position)
    ]
    if offset < 0 or offset + size > arena_size:
        raise DiagnosticError(
            view, f"{placed[0].describe()} leaves the arena of {arena_size} bytes"
        )
    alignment = arena.alignment.value.data if arena.alignment is not None else 1
    if offset % alignment:
        raise DiagnosticError(
            view,
            f"{placed[0].describe()} starts at an offset that is not a "
            f"multiple of the arena's alignment ({alignment})",
        )
    return placed


def _in_place_pair(earlier: _Placed, later: _Placed, ops: list[Operation]) -> bool:
    """Whether `later` may overwrite `earlier`: see the module doc."""
    if (earlier.begin, earlier.end) != (later.begin, later.end) or not (
        earlier.last == later.first and earlier.first < later.first
    ):
        return False
    consumer = ops[earlier.last]
    if not isinstance(consumer, ComputeOp):
        return False
    kernel = kernel_of(consumer.inner)
    index = None if kernel is None else kernel.in_place_operand
    # The overwritten buffer must not be read through another operand (conv(r) + r).
    return (
        index is not None
        and index < len(consumer.ins)
        and consumer.ins[index] is earlier.op.result
        and all(v is not earlier.op.result for i, v in enumerate(consumer.ins) if i != index)
        and later.op.result in consumer.outs
    )


def _undispatched_writer(earlier: _Placed, later: _Placed, ops: list[Operation]) -> str:
    """Why a plan may overlap two buffers at the op between them: a pattern replaced that op
    after plan-memory with one that has no kernel, so no in-place rule allows it."""
    consumer = ops[earlier.last] if earlier.last == later.first else None
    if not isinstance(consumer, ComputeOp) or kernel_of(consumer.inner) is not None:
        return ""
    return (
        f"; {consumer.inner.name} (op {earlier.last}) writes one over the other and has no "
        "#nn.kernel, so no in-place rule allows it (an op made after select-dispatch gets "
        "none: make it before)"
    )


def _check_arena_uses(arenas: set[Operation]) -> None:
    """Only views (and its dealloc) address an arena: a byte range that anything else reads
    or writes (a subview of the arena, an op given the arena itself) is one the check would
    not see, live beside the views over the same bytes."""
    for arena in arenas:
        for use in arena.results[0].uses:
            if not isinstance(use.operation, memref.ViewOp | memref.DeallocOp):
                raise DiagnosticError(
                    use.operation,
                    f"{use.operation.name} uses the arena itself; only memref.view may address "
                    "its bytes, so that the plan's byte ranges can be checked",
                )


def _check_arena_bytes(function: func.FuncOp, arenas: set[Operation]) -> None:
    stated = function.attributes.get(ARENA_BYTES)
    if stated is None:
        return
    allocated = 0
    for arena in arenas:
        assert isinstance(arena, memref.AllocOp) and isinstance(arena.memref.type, MemRefType)
        allocated += arena.memref.type.get_shape()[0]
    if not isinstance(stated, IntegerAttr) or stated.value.data != allocated:
        raise DiagnosticError(
            function,
            f"'{ARENA_BYTES}' is {stated}, but the function's arena allocates {allocated} bytes",
        )


def verify_function(function: func.FuncOp) -> int:
    """Raises a DiagnosticError at the first bad view of `function`; returns views checked.
    What every buffer addresses and who writes the arguments is checked first
    (`runtime/view_check.py`)."""
    check_views(function)
    block = function.body.block
    ops = list(block.ops)
    position = {op: index for index, op in enumerate(ops)}
    placed: list[_Placed] = []
    for op in block.ops:
        if isinstance(op, memref.ViewOp):
            if (
                not isinstance(arena := op.source.owner, memref.AllocOp)
                or arena.parent_block() is not block
            ):
                # A view of a view, or of an argument: no byte range in an arena to check.
                raise DiagnosticError(
                    op,
                    "the view's source must be an arena (a memref.alloc "
                    "in the function's body) for its plan to be checked",
                )
            placed.extend(_placed(op, arena, block, position))
    arenas = {op for op in block.ops if is_arena(op)}
    _check_arena_uses(arenas)
    _check_arena_bytes(function, arenas)
    for op in block.ops:
        if isinstance(op, memref.DeallocOp):
            for late in (p for p in placed if p.op.source is op.memref and p.last > position[op]):
                raise DiagnosticError(
                    late.op,
                    f"{late.describe()} is used after its arena is deallocated (op {position[op]})",
                )
    placed.sort(key=lambda p: (p.first, p.last))
    active: list[_Placed] = []
    for current in placed:
        active = [a for a in active if a.last >= current.first]
        for other in active:
            if (
                other.op.source is current.op.source
                and other.begin < current.end
                and current.begin < other.end
                and not _in_place_pair(other, current, ops)
            ):
                raise DiagnosticError(
                    current.op,
                    f"{current.describe()} overlaps "
                    f"{other.describe()} while both are live"
                    f"{_undispatched_writer(other, current, ops)}",
                )
        active.append(current)
    return len({p.op for p in placed})


def check_before_running(function: func.FuncOp) -> None:
    """`verify_function` for a program about to run (the interpreter, a generated module):
    a plan edited by hand, or written by a faulty pass, would otherwise give wrong results
    silently; it costs little next to one run."""
    if len(function.body.blocks) != 1:
        return  # the runners refuse such a function themselves
    try:
        verify_function(function)
    except DiagnosticError as error:
        raise DiagnosticError(error.op, f"wrong memory plan: {error.message}") from None
