"""`bufferize`: tensors become buffers, and layout becomes shapes, strides and offsets.

Every tensor-level op (an `nn` op or a `layout.reorder`) is wrapped in an `nn.compute` whose
`outs` is the buffer its result is written to (destination-passing style), allocated with an
explicit `memref.alloc`. The buffer of a tensor is `buffer_type(tensor_type)` from the layout
dialect: the physical shape, so a C=3 activation in NCHW16c is `memref<1x1xHxWx16xf32>` and an
OIHW16i16o weight its 6-D packed shape. Function arguments and results become plain, unpadded
memrefs: the caller's arrays are never padded or blocked. Constants and constant expressions
(`dialects/constant_expressions.py`) stay tensors, read by `nn.compute` directly: they are
materialised (computed, packed) once, when the program is loaded.

Two copies disappear on the way, because the memory they would fill is laid out in advance:

- **Halo padding.** When a convolution or pooling pads its input, the producer of that input
  writes into the interior of a buffer that already has the border (a strided view with an
  offset); `layout.fill_border` writes the pad value into the border before the producer
  runs, and the consumer reads the whole buffer with `halo [t, l, b, r]` and pads nothing
  itself. The pad value is 0 for convolutions and for average pooling that counts padding,
  -inf for max pooling; average pooling that excludes padding cannot use a halo. Where
  several consumers want a halo, those of one pad value share it (the value whose
  consumers save the most copy bytes, the earliest on a tie): the border is as wide as the
  largest pads among them, each reads the window it needs, the others pad for themselves.
  Function arguments, returned values and concat members get no halo.
- **Concat in place.** The inputs of an `nn.concat` along channels are produced directly into
  their channel slice of the concat's buffer, and the concat disappears; so are those of a
  concat of images (along N, the outermost axis in memory: each slot one dense run; a 3-D
  convolution's clip between its zero frames, frontends/onnx/volumes.py). In a blocked layout
  this needs each input's channel count but the last one's to be a multiple of the block
  (else a slot would start inside a block, which a subview cannot name: the concat is then
  computed by its kernel). An input that cannot be placed (a function argument, a
  constant, a returned value, one already placed in another concat) is copied with
  `memref.copy`. A concat's own result can be placed in a later concat, so a DenseNet block
  writes all its features into one buffer. A kernel that writes whole buffers only (oneDNN's)
  is given a slot when the slot is one run of memory: one image, whole channel blocks.

Reshapes and slices of plain data become **views** (lowering/views.py, docs/views.md): an
`nn.reshape` or `nn.flatten` is a `memref.reinterpret_cast` of its operand's buffer, an
`nn.slice` whose window is one row-major run a `memref.subview`; no `nn.compute`, no copy.
Views get no halo and no concat slot (they are not written), and an op whose operand's buffer
is not one run (a halo's interior, a concat's slot) or whose result is returned stays a kernel
call. `plan-memory` counts a view's readers in its buffer's live range.

Whether a kernel pads by copying (a halo saves that copy) and whether it writes into strided
views are facts of the kernel, not of the op, which `#nn.kernel` does not carry: they are
asked of `kernel_facts` (kernels/facts.py, the one place passes look a chosen kernel up).

The function gets the attributes `nnlayout.halo_copy_bytes_avoided` (the padded input copies
its kernels no longer make), `nnlayout.concat_copy_bytes_avoided` and
`nnlayout.view_copy_bytes_avoided` (the results of the ops made views).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    FunctionType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects import nn
from nnlayout.dialects.compute import ComputeOp, compute_of, segment_sizes
from nnlayout.dialects.constant_expressions import is_constant_expression
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import (
    BUFFER_ALIGNMENT,
    FillBorderOp,
    LayoutSpec,
    ReorderOp,
    buffer_type,
    element_bytes,
    encoding_name,
    layout_of,
    spatial_axes,
    storage_of,
)
from nnlayout.kernels.facts import kernel_facts
from nnlayout.lowering.views import is_view, view_op

Halo = tuple[int, int, int, int]

_ALIGNMENT = IntegerAttr(BUFFER_ALIGNMENT, 64)  # memref.alloc's, as AllocOp.get spells it


def _allocation(buffer: MemRefType) -> memref.AllocOp:
    """`memref.AllocOp([], [], buffer, _ALIGNMENT)`, built as xDSL's IRDL builder builds it
    but directly (the builder costs as much as the rest of bufferizing a value)."""
    op = memref.AllocOp.__new__(memref.AllocOp)
    properties = {"alignment": _ALIGNMENT, "operandSegmentSizes": segment_sizes(0, 0)}
    Operation.__init__(op, result_types=(buffer,), properties=properties)
    return op


def _writes_strided(op: Operation) -> bool:
    """Whether `op`'s kernel may write into a halo's interior or a concat's slice."""
    kernel = kernel_facts(op)
    return kernel is None or kernel.writes_strided


def _pad_value(op: Operation) -> float | None:
    """The value `op` pads its operand 0 with, if a halo can stand in for its padding (and
    its kernel would otherwise copy to pad)."""
    kernel = kernel_facts(op)
    if kernel is not None and not kernel.reads_halo:
        return None
    if isinstance(op, nn.NNOp) and not nn.is_float_type(
        getattr(op.operands[0].type, "element_type", None)
    ):
        # Quantized data: a halo would have to hold the zero point (a qconv2d's padding is
        # the quantized 0) or the type's minimum (max pooling), never 0.0 or -inf;
        # layout.fill_border writes floats only, so such an operand gets no halo and its
        # kernel pads it itself.
        return None
    if isinstance(op, nn.Conv2dOp):
        return 0.0
    if isinstance(op, nn.MaxPool2dOp):
        return -math.inf
    if isinstance(op, nn.AvgPool2dOp) and op.count_include_pad is not None:
        return 0.0
    return None


def _pads(op: Operation) -> Halo:
    top, left, bottom, right = nn.ints(op.pads)  # type: ignore[attr-defined]
    return top, left, bottom, right


def _tensor_bytes(value: SSAValue, halo: Sequence[int] | None = None) -> int:
    value_type = value.type
    assert isinstance(value_type, TensorType)
    shape = buffer_type(value_type, halo).get_shape()
    return math.prod(shape) * element_bytes(value_type.element_type)


@dataclass
class _Plan:
    """Decisions taken before rewriting: which values live in a concat's buffer, and which
    buffers carry a halo for which consumers."""

    # value -> (concat result it is part of, offset of its first channel)
    concat_slot: dict[SSAValue, tuple[SSAValue, int]] = field(default_factory=dict)
    in_place_concats: set[Operation] = field(default_factory=set)
    halo: dict[SSAValue, tuple[Halo, float]] = field(default_factory=dict)
    # value -> the value whose buffer its in-place producer overwrites
    written_over: dict[SSAValue, SSAValue] = field(default_factory=dict)
    halo_readers: set[Operation] = field(default_factory=set)
    # reshapes and slices whose result is a view of their operand's buffer (lowering/views.py)
    views: set[Operation] = field(default_factory=set)


def _placeable(value: SSAValue, returned: set[SSAValue], plan: _Plan, dense: bool) -> bool:
    """Whether `value` can be computed straight into a concat's slot; a `dense` slot (one run
    of memory) takes kernels that write only whole buffers too."""
    owner = value.owner
    return (
        isinstance(owner, Operation)
        and not is_constant_expression(owner)
        and value not in returned
        and value not in plan.concat_slot
        and owner not in plan.views
        and (dense or _writes_strided(owner))
    )


def _plan_function(function: func.FuncOp) -> _Plan:
    """Where each value of `function` will live: concat slots first, then halos (a value in
    a concat's slot gets none)."""
    plan = _Plan()
    block = function.body.block
    returned = {v for op in block.ops if isinstance(op, func.ReturnOp) for v in op.operands}
    # Views get no slot and no halo: they are not written. Where their operand gets either,
    # its buffer is not one run, and the op is computed by its kernel after all.
    plan.views = {
        op
        for op in block.ops
        if is_view(op) and op.results[0] not in returned and not is_constant_expression(op)
    }
    _plan_concats(block, returned, plan)
    _plan_halos(block, returned, plan)
    plan.views = {
        op
        for op in plan.views
        if op.operands[0] not in plan.concat_slot and op.operands[0] not in plan.halo
    }
    return plan


def _plan_concats(block: Block, returned: set[SSAValue], plan: _Plan) -> None:
    """Places the inputs of channel concats that can be produced in their slot (module doc)."""
    for op in block.ops:
        if (
            not isinstance(op, nn.ConcatOp)
            or len(nn.shape_of(op.output)) != 4
            or op.normalized_axis not in (0, 1)
        ):
            continue
        if any(encoding_name(value.type) != encoding_name(op.output.type) for value in op.inputs):
            continue  # its kernel reorders: _finish_concat copies bytes as they are
        layout = layout_of(op.output.type)
        if op.normalized_axis == 0:
            _plan_batch_concat(op, layout, returned, plan)
            continue
        block_size = 1 if layout is None else layout.block_product("C")
        if (
            layout is not None
            and layout.dims != ("N", "C", "H", "W")
            and not (layout.axes == ("N", "C", "H", "W") and layout.blocks_of("C"))
        ):
            continue  # channels are not the outermost varying axis after N
        if any(nn.shape_of(value)[1] % block_size for value in op.inputs[:-1]):
            # A slot ending inside a block: the next input's slot would start in the
            # middle of one, which a subview of whole blocks cannot name (it overlapped).
            continue
        # With one image, channels are outermost: a slot of whole blocks is one dense run.
        single = nn.shape_of(op.output)[0] == 1
        offset = 0
        for index, value in enumerate(op.inputs):
            channels = nn.shape_of(value)[1]
            dense = single and (channels % block_size == 0 or index == len(op.inputs) - 1)
            if _placeable(value, returned, plan, dense):
                plan.concat_slot[value] = (op.output, offset)
                plan.in_place_concats.add(op)
            offset += channels


def _plan_batch_concat(
    op: nn.ConcatOp, layout: LayoutSpec | None, returned: set[SSAValue], plan: _Plan
) -> None:
    """Places the inputs of a concat of images (a 3-D convolution's zero frames around a
    clip's): where N is the outermost axis in memory, each slot is one dense run."""
    if layout is not None and layout.dims[0] != "N":
        return
    offset = 0
    for value in op.inputs:
        if _placeable(value, returned, plan, True):
            plan.concat_slot[value] = (op.output, offset)
            plan.in_place_concats.add(op)
        offset += nn.shape_of(value)[0]


def _slot_offsets(concat: SSAValue, value_type: TensorType[Attribute], offset: int) -> list[int]:
    """The buffer offsets of the slot at `offset` along the concat's axis (images, or
    channels: whole blocks of them)."""
    owner = concat.owner
    assert isinstance(owner, nn.ConcatOp)
    offsets = [0] * len(buffer_type(value_type).get_shape())
    if owner.normalized_axis == 0:
        offsets[0] = offset
    else:
        layout = layout_of(concat.type)
        offsets[1] = offset // (1 if layout is None else layout.block_product("C"))
    return offsets


def _plan_halos(block: Block, returned: set[SSAValue], plan: _Plan) -> None:
    """Gives each value that padding consumers read a halo, shared by those of one pad value
    (module doc), and extends it back through the in-place chain producing the value."""
    order = {op: index for index, op in enumerate(block.ops)}
    for op in block.ops:
        for result in op.results:
            if (
                result in returned
                or op in plan.views
                or result in plan.concat_slot
                or not isinstance(result.type, TensorType)
                or is_constant_expression(op)
            ):
                continue
            readers = [
                use.operation
                for use in result.uses
                if use.index == 0
                and _pad_value(use.operation) is not None
                and any(_pads(use.operation))
            ]
            if not readers or len(nn.shape_of(result)) != 4 or not _writes_strided(op):
                continue
            by_value: dict[float, list[Operation]] = {}
            for reader in readers:
                by_value.setdefault(_pad_value(reader), []).append(reader)  # type: ignore[arg-type]
            value, sharing = max(
                by_value.items(),
                key=lambda item: (
                    sum(_tensor_bytes(result, _pads(r)) for r in item[1]),
                    -min(order[r] for r in item[1]),
                ),
            )
            halo = tuple(max(_pads(r)[i] for r in sharing) for i in range(4))
            plan.halo[result] = (halo, value)  # type: ignore[assignment]
            plan.halo_readers.update(sharing)
            _share_back_in_place(plan, result, returned)


def _holds_values_read_elsewhere(plan: _Plan, concat: SSAValue) -> bool:
    """Whether a value placed in `concat`'s buffer (directly or in a nested concat) is read
    by another op than the concat: an op writing over that buffer would change what it reads
    (concat(c, c) -> batch_norm in place, c read again later)."""
    return any(
        slot is concat and (not value.has_one_use() or _holds_values_read_elsewhere(plan, value))
        for value, (slot, _) in plan.concat_slot.items()
    )


def _share_back_in_place(plan: _Plan, value: SSAValue, returned: set[SSAValue]) -> None:
    """Lets the in-place chain that produces a halo'd value (conv -> batch_norm -> relu ->
    conv) work in one halo'd buffer: each in-place op writes over its input's interior, so
    the halo costs no extra buffer and in-place reuse is kept."""
    while True:
        producer = value.owner
        kernel = kernel_of(producer) if isinstance(producer, Operation) else None
        if kernel is None or kernel.in_place_operand is None:
            return
        source = producer.operands[kernel.in_place_operand]
        if (
            not isinstance(source.owner, Operation)
            or is_constant_expression(source.owner)
            or source.owner in plan.views  # a view is not written
            or not _writes_strided(source.owner)
            or source in returned
            or source in plan.concat_slot
            or source in plan.halo
            or not source.has_one_use()
            or source.type != value.type
            or _holds_values_read_elsewhere(plan, source)
        ):
            return
        plan.halo[source] = plan.halo[value]
        plan.written_over[value] = source
        value = source


@dataclass
class _FunctionBufferizer:
    function: func.FuncOp
    plan: _Plan
    buffers: dict[SSAValue, SSAValue] = field(default_factory=dict)
    allocations: dict[SSAValue, SSAValue] = field(default_factory=dict)
    dropped: list[Operation] = field(default_factory=list[Operation])
    halo_bytes_avoided: int = 0
    concat_bytes_avoided: int = 0
    view_bytes_avoided: int = 0

    def _insert(self, op: Operation, before: Operation) -> Operation:
        """Inserts `op` before `before`, the op it is made for, whose location it takes (as
        MLIR's rewrites do), so that errors about a buffer point at its producer."""
        op.location = before.location
        Rewriter.insert_op(op, InsertPoint.before(before))
        return op

    def _subview(
        self, source: SSAValue, offsets: Sequence[int], sizes: Sequence[int], before: Operation
    ) -> SSAValue:
        source_type = source.type
        assert isinstance(source_type, MemRefType)
        view = memref.SubviewOp.from_static_parameters(
            source, source_type, offsets, sizes, [1] * len(sizes)
        )
        return self._insert(view, before).results[0]

    def _interior(
        self, allocation: SSAValue, value: SSAValue, halo: Halo, before: Operation
    ) -> SSAValue:
        value_type = value.type
        assert isinstance(value_type, TensorType)
        h, w = spatial_axes(value_type)
        offsets = [0] * len(buffer_type(value_type).get_shape())
        offsets[h], offsets[w] = halo[0], halo[1]
        return self._subview(allocation, offsets, buffer_type(value_type).get_shape(), before)

    def buffer_for(self, value: SSAValue, before: Operation) -> SSAValue:
        """The buffer `value` is written to, created (with its enclosing concat buffer and
        halo border) the first time it is asked for."""
        if value in self.buffers:
            return self.buffers[value]
        value_type = value.type
        assert isinstance(value_type, TensorType)
        if value in self.plan.written_over:
            source = self.plan.written_over[value]
            buffer = self.buffer_for(source, before)
            self.allocations[value] = self.allocations[source]
        elif value in self.plan.concat_slot:
            concat_result, slot_offset = self.plan.concat_slot[value]
            parent = self.buffer_for(concat_result, before)
            offsets = _slot_offsets(concat_result, value_type, slot_offset)
            buffer = self._subview(parent, offsets, buffer_type(value_type).get_shape(), before)
            self.concat_bytes_avoided += _tensor_bytes(value)
        else:
            halo, pad_value = self.plan.halo.get(value, (None, 0.0))
            allocation = self._insert(_allocation(buffer_type(value_type, halo)), before).results[0]
            allocation.name_hint = value.name_hint
            self.allocations[value] = allocation
            buffer = allocation
            if halo is not None:
                self._insert(
                    FillBorderOp(allocation, spatial_axes(value_type), halo, pad_value), before
                )
                buffer = self._interior(allocation, value, halo, before)
        buffer.name_hint = value.name_hint
        self.buffers[value] = buffer
        return buffer

    def _input(self, value: SSAValue) -> SSAValue:
        """What an `nn.compute` reads for `value`: its buffer; a constant (expression) is read
        as the tensor itself and a function argument is its own buffer (retyped at the end)."""
        return self.buffers.get(value, value)

    def _halo_input(self, op: Operation) -> tuple[SSAValue, Halo] | None:
        """For a consumer reading its input's halo: the padded view it reads, and its pads."""
        if op not in self.plan.halo_readers:
            return None
        source = op.operands[0]
        halo, _ = self.plan.halo[source]
        pads = _pads(op)
        allocation = self.allocations[source]
        if pads == halo:
            return allocation, pads
        source_type = source.type
        assert isinstance(source_type, TensorType)
        h, w = spatial_axes(source_type)
        shape = list(buffer_type(source_type, pads).get_shape())
        offsets = [0] * len(shape)
        offsets[h], offsets[w] = halo[0] - pads[0], halo[1] - pads[1]
        return self._subview(allocation, offsets, shape, op), pads

    def wrap(self, op: Operation) -> None:
        if op in self.plan.in_place_concats:
            self._finish_concat(op)
            return
        if op in self.plan.views:
            self._view(op)
            return
        ins = [self._input(v) for v in op.operands]
        halo_input = self._halo_input(op)
        if halo_input is not None:
            ins[0] = halo_input[0]
            self.halo_bytes_avoided += _tensor_bytes(op.operands[0], halo_input[1])
        for index, result in enumerate(op.results):
            if storage_of(result.type) != "dense":  # else buffer_type's error, unlocated
                raise DiagnosticError(
                    op,
                    f"result {index} is {result.type}: CSR tensors "
                    "have no buffer; bufferize needs dense results",
                )
        outs = [self.buffer_for(r, op) for r in op.results]
        before = op.next_op
        assert before is not None
        op.detach()
        compute = compute_of(op, ins, outs, None if halo_input is None else halo_input[1])
        Rewriter.insert_op(compute, InsertPoint.before(before))
        compute.location = op.location

    def _view(self, op: Operation) -> None:
        """`op`'s result becomes a view of its operand's buffer; `op` goes away."""
        operand = op.operands[0]
        source = self._input(operand)
        source_type = source.type
        if not isinstance(source_type, MemRefType):  # an argument, retyped at the end
            assert isinstance(operand.type, TensorType)
            source_type = buffer_type(operand.type)
        view = self._insert(view_op(op, source, source_type), op).results[0]
        view.name_hint = op.results[0].name_hint
        self.buffers[op.results[0]] = view
        self.view_bytes_avoided += _tensor_bytes(op.results[0])
        op.detach()
        self.dropped.append(op)  # erased once its users have been wrapped

    def _finish_concat(self, op: Operation) -> None:
        """Copies the inputs that could not be produced in place; the concat goes away."""
        assert isinstance(op, nn.ConcatOp)
        target = self.buffer_for(op.output, op)
        axis = op.normalized_axis
        offset = 0
        for value in op.inputs:
            value_type = value.type
            assert isinstance(value_type, TensorType)
            if self.plan.concat_slot.get(value) != (op.output, offset):
                offsets = _slot_offsets(op.output, value_type, offset)
                slot = self._subview(target, offsets, buffer_type(value_type).get_shape(), op)
                self._insert(memref.CopyOp(self._materialized(value, op), slot), op)
            offset += nn.shape_of(value)[axis]
        op.detach()
        self.dropped.append(op)  # erased once its users have been wrapped

    def _materialized(self, value: SSAValue, before: Operation) -> SSAValue:
        """A buffer of its own holding `value`; a constant (expression) or an argument is
        copied into one (through an identity `layout.reorder`, which packs a constant's
        layout)."""
        if value in self.buffers:
            return self.buffers[value]
        value_type = value.type
        assert isinstance(value_type, TensorType)
        buffer = self.buffer_for(value, before)
        self._insert(compute_of(ReorderOp(value, value_type), [value], [buffer]), before)
        return buffer

    def run(self) -> None:
        block = self.function.body.block
        for arg in block.args:
            arg_type = arg.type
            if not isinstance(arg_type, TensorType) or encoding_name(arg_type):
                raise DiagnosticError(
                    self.function,
                    f"argument {arg.index} has type "
                    f"{arg_type}; bufferize needs plain tensor arguments",
                )
        for op in list(block.ops):
            if is_constant_expression(op):
                continue
            if isinstance(op, func.ReturnOp):
                self._return(op)
            elif isinstance(op, nn.NNOp | ReorderOp):
                self.wrap(op)
            else:
                raise DiagnosticError(op, f"bufferize cannot handle '{op.name}'")
        for op in reversed(self.dropped):  # a later concat may use an earlier one
            op.erase()
        for arg in block.args:
            Rewriter.replace_value_with_new_type(arg, buffer_type(arg.type))
        self.function.function_type = FunctionType.from_lists(
            [a.type for a in block.args],
            [buffer_type(t) for t in self.function.function_type.outputs],
        )
        self.function.attributes["nnlayout.halo_copy_bytes_avoided"] = IntegerAttr(
            self.halo_bytes_avoided, i64
        )
        self.function.attributes["nnlayout.concat_copy_bytes_avoided"] = IntegerAttr(
            self.concat_bytes_avoided, i64
        )
        self.function.attributes["nnlayout.view_copy_bytes_avoided"] = IntegerAttr(
            self.view_bytes_avoided, i64
        )

    def _return(self, op: func.ReturnOp) -> None:
        for value in op.operands:
            value_type = value.type
            if not isinstance(value_type, TensorType) or encoding_name(value_type):
                raise DiagnosticError(
                    op, f"returns {value_type}; bufferize needs plain tensor results"
                )
        Rewriter.replace_op(op, func.ReturnOp(*(self._materialized(v, op) for v in op.operands)))


def _attribute_types_are_tensors(types: Sequence[Attribute]) -> bool:
    return all(isinstance(t, TensorType) for t in types)


@dataclass(frozen=True)
class BufferizePass(ModulePass):
    name = "bufferize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.ops:
            if not isinstance(function, func.FuncOp) or function.is_declaration:
                continue
            if not _attribute_types_are_tensors(function.function_type.inputs):
                continue  # already bufferized
            if len(function.body.blocks) != 1:
                raise DiagnosticError(function, "bufferize needs single-block functions")
            _FunctionBufferizer(function, _plan_function(function)).run()


def activation_reorders(planned: ModuleOp) -> int:
    """Reorders run per inference in a planned module: `nn.compute`s of a `layout.reorder`
    that changes the layout, of anything but a constant (expression), which is packed once,
    at load."""
    known: dict[Operation, bool] = {}
    return sum(
        isinstance(op, ComputeOp)
        and isinstance(op.inner, ReorderOp)
        and encoding_name(op.inner.input.type) != encoding_name(op.inner.output.type)
        and not (
            isinstance(source := op.ins[0].owner, Operation)
            and is_constant_expression(source, known)
        )
        for op in planned.walk()
    )
