"""`plan-memory`: every intermediate buffer of a function gets a byte offset in one arena.

Runs after `bufferize`, when every buffer is a `memref.alloc` whose type already holds its
real size: channel padding of blocked layouts, halo borders and the element type included.
Per function:

1. **Live intervals.** A root buffer (a `memref.alloc`) and all its views (`memref.subview`,
   `memref.reinterpret_cast`: halo interiors, concat slots, reshapes and slices made views,
   see lowering/views.py) are one buffer: it lives from the first op that touches any of them
   (the producer writing it, or `layout.fill_border` writing its halo) to the last op that
   reads any of them. So a view's reader keeps its operand's buffer live, and no kernel
   overwrites that buffer in place while a view of it may still be read. Time counts
   the ops that touch buffers (computes, copies, fills, the return); allocations, views,
   constants and constant expressions (evaluated at load, `dialects/constant_expressions.py`)
   take no time.
2. **In place.** An `nn.compute` writes its result over `ins[i]` when the kernel chosen for
   its wrapped op says `in_place = i`, `ins[i]`'s buffer dies at this op, and both are whole
   buffers of equal size: the two then form one interval (chains of in-place ops, one).
3. **Offsets** (`transforms/placement.py`, the planning core, on bare (start, end, size)
   intervals). Several orderings feed one best-fit placement (each buffer goes in the
   smallest gap left by the already placed buffers live at the same time, else on top); the
   smallest arena wins. Greedy by size and greedy by breadth are TFLite's arena planners
   (Pisarchyk & Lee, 2020, "Efficient memory management for deep neural net inference"),
   best fit by area and by duration XLA's heap simulator orderings; greedy by size with
   ties broken by last use (latest first) is ours. Where the best of them stays above the
   lower bound, a seeded local search moves buffers in its order, as many moves as a fixed
   budget of work allows; where that too stays above it, greedy by size class plans
   near-equal buffers (within 1/1024) at one size, so that they take each other's places,
   and is kept if smaller.
4. **Rewrite.** One `memref.alloc() {alignment = 64} : memref<Nxi8>` at the top of the
   function, then one `arith.constant` per distinct offset (`%c512 = arith.constant 512 :
   index`); each planned `memref.alloc` becomes `memref.view %arena[%c512][]`.

Buffers a function returns escape and stay separate allocations, as do buffers some op we do
not model uses (kept conservative); function arguments belong to the caller.

The function gets `nnlayout.arena_bytes`, `nnlayout.lower_bound_bytes` (the most bytes live
at one point, an in-place pair counted once, each buffer's size rounded up to the 64-byte
alignment every buffer starts on: no plan can do better), `nnlayout.unplanned_bytes`
(every intermediate buffer in its own allocation), `nnlayout.padding_bytes` (channel padding
and halo borders in the arena's buffers, summed over the buffers like the unplanned bytes)
and `nnlayout.halo_bytes` (the halo part of it); outside the arena, the bytes of the constants
the loaded program keeps (a packed one packed, and plain too only where something still
reads its plain array) and of the plain arrays it frees at load (`transforms/constant_bytes.py`).

Options: `report=true` prints a readable report of each plan to stderr; `svg="FILE"` draws
the plans (see `transforms/memory_report.py`). Functions planned already are left alone.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp, TensorType, i8, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.constant_expressions import is_constant_expression
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import BUFFER_ALIGNMENT, FillBorderOp, element_bytes, layout_of
from nnlayout.dialects.plan import (
    ARENA_BYTES,
    HALO_BYTES,
    LOWER_BOUND_BYTES,
    PADDING_BYTES,
    UNPLANNED_BYTES,
)
from nnlayout.files import write_text
from nnlayout.transforms.constant_bytes import constant_bytes
from nnlayout.transforms.memory_plan import FunctionPlan, Interval, PlannedBuffer
from nnlayout.transforms.memory_report import format_report, plan_svg
from nnlayout.transforms.placement import align, peak, plan_offsets


# ------------------------------------------------------------------ buffers of a function
@dataclass(eq=False)
class Buffer:
    """A root `memref.alloc` with its views, live interval and size."""

    alloc: memref.AllocOp
    size: int
    start: int
    end: int
    views: list[SSAValue]  # the allocation's result and every subview of it
    writers: list[Operation] = field(default_factory=list[Operation])
    escapes: bool = False
    overwrites: Buffer | None = None  # the buffer whose memory it takes over, in place

    @property
    def name(self) -> str:
        return self.alloc.memref.name_hint or "buffer"


# Ops that take no time: they allocate, name memory or make constants, touching no buffer;
# so do `nn` constant expressions, evaluated once at load.
_TIMELESS = (
    memref.AllocOp,
    memref.SubviewOp,
    memref.ReinterpretCastOp,
    memref.ViewOp,
    arith.ConstantOp,
)
# Ops naming part or all of a buffer's bytes (bufferize's halo interiors, concat slots and
# views, lowering/views.py): their results are that buffer.
_VIEWS = (memref.SubviewOp, memref.ReinterpretCastOp)


def _steps(block: Block) -> dict[Operation, int]:
    """The step of each op: ops that touch buffers advance time, others share the next one."""
    steps: dict[Operation, int] = {}
    step = 0
    for op in block.ops:
        steps[op] = step
        if not isinstance(op, _TIMELESS) and not is_constant_expression(op):
            step += 1
    return steps


def _buffer(alloc: memref.AllocOp, block: Block, steps: dict[Operation, int]) -> Buffer:
    alloc_type = alloc.memref.type
    assert isinstance(alloc_type, MemRefType)
    size = math.prod(alloc_type.get_shape()) * element_bytes(alloc_type.element_type)
    touched: list[int] = []
    writers: list[Operation] = []
    escapes = False
    views = [alloc.memref]
    pending = [alloc.memref]
    while pending:
        for use in pending.pop().uses:
            user = block.find_ancestor_op_in_block(use.operation)
            if isinstance(user, _VIEWS) and use.index == 0:
                views.append(user.result)
                pending.append(user.result)
                continue
            if user is None or not isinstance(user, ComputeOp | memref.CopyOp | FillBorderOp):
                escapes = True  # returned, or used by an op whose effects we do not model
                continue
            touched.append(steps[user])
            if (isinstance(user, ComputeOp) and use.index >= len(user.ins)) or (
                isinstance(user, memref.CopyOp) and use.index == 1
            ):
                writers.append(user)
    start = min(touched, default=steps[alloc])
    return Buffer(alloc, size, start, max(touched, default=start), views, writers, escapes)


def _find_in_place(
    block: Block, buffers: dict[SSAValue, Buffer], steps: dict[Operation, int]
) -> None:
    """Joins an `nn.compute`'s output to the input its kernel may overwrite (see module doc);
    not when the op also reads another view of that input's buffer."""
    owner = {view: b for b in buffers.values() for view in b.views}
    for op in block.ops:
        if not isinstance(op, ComputeOp) or len(op.outs) != 1:
            continue
        kernel = kernel_of(op.inner)
        index = None if kernel is None else kernel.in_place_operand
        if index is None or index >= len(op.ins):
            continue
        source, target = buffers.get(op.ins[index]), buffers.get(op.outs[0])
        if (
            source is None
            or target is None
            or source is target
            or source.escapes
            or target.escapes
            or source.size != target.size
            or source.end != steps[op]
            or target.start != steps[op]
            or any(owner.get(v) is source for i, v in enumerate(op.ins) if i != index)
        ):
            continue
        target.overwrites = source


def _padding(buffer: Buffer, written: dict[SSAValue, TensorType]) -> tuple[int, int]:
    """Channel-padding bytes of the values written into `buffer`, and its halo bytes."""
    alloc_type = buffer.alloc.memref.type
    assert isinstance(alloc_type, MemRefType)
    width = element_bytes(alloc_type.element_type)
    channel = 0
    for writer in buffer.writers:
        values: list[TensorType] = []
        if isinstance(writer, ComputeOp):
            values = [r.type for r in writer.inner.results if isinstance(r.type, TensorType)]
        elif isinstance(writer, memref.CopyOp) and writer.source in written:
            values = [written[writer.source]]
        for value_type in values:
            if (spec := layout_of(value_type)) is not None:
                channel += spec.padding_elements(value_type.get_shape()) * width
    halo = 0
    for use in buffer.alloc.memref.uses:
        if isinstance(fill := use.operation, FillBorderOp):
            top, left, bottom, right = fill.halo.get_values()
            shape = list(alloc_type.get_shape())
            h, w = fill.axes.get_values()
            shape[h] -= top + bottom
            shape[w] -= left + right
            halo = buffer.size - math.prod(shape) * width
    return channel, halo


def plan_function(function: func.FuncOp) -> tuple[FunctionPlan, list[Buffer]]:
    """The plan of a bufferized function and its planned buffers, in block order; the IR is
    not changed."""
    _require_bufferized(function)
    block = function.body.block
    steps = _steps(block)
    buffers = {
        op.memref: _buffer(op, block, steps)
        for op in block.ops
        if isinstance(op, memref.AllocOp)
        and isinstance(op.memref.type, MemRefType)
        and all(d >= 0 for d in op.memref.type.get_shape())
    }
    _find_in_place(block, buffers, steps)
    planned = [b for b in buffers.values() if not b.escapes]
    groups = [b for b in planned if b.overwrites is None]
    group_index = {b: n for n, b in enumerate(groups)}
    roots = _roots(planned)
    members: list[list[Buffer]] = [[] for _ in groups]
    for b in planned:
        members[group_index[roots[b]]].append(b)
    intervals = [
        Interval(min(m.start for m in ms), max(m.end for m in ms), g.size)
        for g, ms in zip(groups, members, strict=True)
    ]
    placement = plan_offsets(intervals, BUFFER_ALIGNMENT)
    # Every buffer starts on the alignment, so it takes its size rounded up to it: 1-byte
    # buffers (int8) of other sizes make the bound of the sizes themselves unreachable.
    aligned = [Interval(i.start, i.end, align(i.size, BUFFER_ALIGNMENT)) for i in intervals]
    bound, peak_step = peak(aligned)
    written = _written_types(block)
    padding = [_padding(b, written) for b in planned]
    report = tuple(
        PlannedBuffer(
            b.name,
            Interval(b.start, b.end, b.size),
            placement.offsets[group_index[roots[b]]],
            roots[b].name,
            None if b.overwrites is None else b.overwrites.name,
            sum(p),
            p[1],
        )
        for b, p in zip(planned, padding, strict=True)
    )
    plan = FunctionPlan(
        function.sym_name.data,
        report,
        placement,
        bound,
        peak_step,
        sum(b.size for b in planned),
        sum(c + h for c, h in padding),
        sum(h for _, h in padding),
        max(steps.values(), default=0) + 1,
        constant_bytes(function),
    )
    return plan, planned


def _roots(planned: list[Buffer]) -> dict[Buffer, Buffer]:
    """The first buffer of each buffer's in-place chain. Each chain is walked once (walking it
    again for each of its buffers is quadratic in a chain of thousands of ops in place)."""
    roots: dict[Buffer, Buffer] = {}
    for b in planned:
        chain: list[Buffer] = []
        last = b
        while last.overwrites is not None and last not in roots:
            chain.append(last)
            last = last.overwrites
        root = roots.get(last, last)
        roots.update(dict.fromkeys(chain, root))
        roots[b] = root
    return roots


def _require_bufferized(function: func.FuncOp) -> None:
    """A function `plan_function` can plan: one block, memref arguments and results."""
    if len(function.body.blocks) != 1:
        raise DiagnosticError(function, "only single-block functions can be planned")
    if any(
        isinstance(t, TensorType)
        for t in (*function.function_type.inputs, *function.function_type.outputs)
    ):
        raise DiagnosticError(
            function,
            "only bufferized functions (memref arguments and "
            "results) can be planned: run bufferize first",
        )


def _written_types(block: Block) -> dict[SSAValue, TensorType]:
    """The tensor type of the value each `nn.compute` of `block` writes into each out."""
    return {
        out: result.type
        for op in block.ops
        if isinstance(op, ComputeOp)
        for out, result in zip(op.outs, op.inner.results, strict=True)
        if isinstance(result.type, TensorType)
    }


def _rewrite(function: func.FuncOp, plan: FunctionPlan, planned: Sequence[Buffer]) -> None:
    """Replaces each planned `memref.alloc` by a view of one arena at its offset."""
    block = function.body.block
    if planned:
        arena = memref.AllocOp.get(i8, BUFFER_ALIGNMENT, [plan.arena_bytes])
        arena.memref.name_hint = "arena"
        assert block.first_op is not None
        Rewriter.insert_op(arena, InsertPoint.before(block.first_op))
        # One constant per distinct offset, after the arena (in order of first use): a
        # constant per view made a fifth of a large model's planned ops.
        offsets: dict[int, arith.ConstantOp] = {}
        last: Operation = arena
        for buffer, entry in zip(planned, plan.buffers, strict=True):
            if (offset := offsets.get(entry.offset)) is None:
                offset = offsets[entry.offset] = arith.ConstantOp(
                    IntegerAttr(entry.offset, IndexType())
                )
                offset.location = buffer.alloc.location
                offset.result.name_hint = f"c{entry.offset}"
                Rewriter.insert_op(offset, InsertPoint.after(last))
                last = offset
            view = memref.ViewOp(arena.memref, offset, [], buffer.alloc.memref.type)
            view.location = buffer.alloc.location
            view.result.name_hint = buffer.alloc.memref.name_hint
            Rewriter.replace_op(buffer.alloc, view, [view.result])
    for name, value in (
        (ARENA_BYTES, plan.arena_bytes),
        (LOWER_BOUND_BYTES, plan.lower_bound_bytes),
        (UNPLANNED_BYTES, plan.unplanned_bytes),
        (PADDING_BYTES, plan.padding_bytes),
        (HALO_BYTES, plan.halo_bytes),
        *plan.constants.attributes().items(),
    ):
        function.attributes[name] = IntegerAttr(value, i64)


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    """Places every intermediate buffer in one arena, sharing memory between buffers never
    live at the same time and letting in-place kernels overwrite their input (module doc)."""

    name = "plan-memory"

    report: bool = False
    svg: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        plans = []
        for function in op.ops:
            if (
                not isinstance(function, func.FuncOp)
                or function.is_declaration
                or ARENA_BYTES in function.attributes
            ):
                continue  # nothing to plan, or planned already
            plan, planned = plan_function(function)
            _rewrite(function, plan, planned)
            plans.append(plan)
        if self.report:
            for plan in plans:
                print(format_report(plan), file=sys.stderr)
        if self.svg:
            write_text(self.svg, plan_svg(plans))
