"""`nn.compute`: an `nn` op applied to buffers, in destination-passing style.

After bufferization every tensor op is wrapped, like a `linalg.generic` whose body is the
original tensor-level op:

    nn.compute ins(%x, %w : memref<1x1x8x8x8xf32>, tensor<8x8x3x3xf32, #layout.layout<"IHW8iO8o">>)
               outs(%y : memref<1x1x8x8x8xf32>) {
    ^bb0(%a: tensor<1x8x8x8xf32, #layout.layout<"NCHW8c">>, %b: tensor<...>):
      %r = nn.conv2d %a, %b ... {kernel = #nn.kernel<...>} : (...) -> tensor<...>
      nn.yield %r : tensor<...>
    }

The body keeps the op's full tensor-level meaning (logical shapes, layouts, attributes, chosen
kernel), so nothing is lost and the op verifies as before; the operands give the memory it
reads and writes. `ins` are memrefs holding the operands in their physical arrangement, or
tensors for values that need no buffer of their own (constants, materialised at load time);
`outs` are the buffers the results are written to. The verifier checks each memref against
the memref type the layout dialect derives from the body's tensor type (`buffer_type`):
same shape and element type; its strides may differ (a view into a larger buffer).

`halo = array<i64: top, left, bottom, right>`: `ins[0]` is the *padded* input of a
convolution or pooling: its spatial dims include that many rows/columns of border already
holding the op's pad value, so the kernel runs with no padding of its own (no pad copy).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import DenseArrayBase, MemRefType, NoneAttr, TensorType, i32, i64
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue, SSAValues
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    region_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator, NoTerminator, is_side_effect_free
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects.layout import buffer_type, element_bytes

HALO_ATTR = "halo"


@irdl_op_definition
class ComputeOp(IRDLOperation):
    """The single op of its body applied to `ins`, writing `outs` (see the module doc)."""

    name = "nn.compute"

    ins = var_operand_def(MemRefType | TensorType)
    outs = var_operand_def(MemRefType)
    halo = opt_prop_def(DenseArrayBase.constr(i64))
    body = region_def("single_block")
    traits = traits_def(NoTerminator())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        ins: Sequence[SSAValue],
        outs: Sequence[SSAValue],
        body: Region,
        halo: Sequence[int] | None = None,
    ):
        properties: dict[str, Attribute] = {}
        if halo is not None:
            properties[HALO_ATTR] = DenseArrayBase.from_list(i64, tuple(halo))
        ins, outs = tuple(ins), tuple(outs)
        if not all(isinstance(value, SSAValue) for value in (*ins, *outs)):
            super().__init__(operands=[ins, outs], regions=[body], properties=properties)
            return
        # What xDSL's IRDL builder makes of these arguments, built directly: it costs as much
        # as the rest of bufferizing an op (one nn.compute per op of a model).
        properties[_SEGMENT_SIZES] = segment_sizes(len(ins), len(outs))
        Operation.__init__(self, operands=(*ins, *outs), properties=properties, regions=(body,))

    @property
    def inner(self) -> Operation:
        """The tensor-level op this computes."""
        first = self.body.block.first_op
        assert first is not None
        return first

    @property
    def halo_values(self) -> tuple[int, int, int, int] | None:
        if self.halo is None:
            return None
        top, left, bottom, right = (int(v) for v in self.halo.get_values())
        return top, left, bottom, right

    def verify_(self) -> None:
        block = self.body.block
        ops = list(block.ops)
        if len(ops) != 2 or not isinstance(ops[1], YieldOp):
            raise VerifyException("nn.compute: the body must hold exactly one op and its nn.yield")
        inner, terminator = ops
        ins, outs, args = self.ins, self.outs, block.args  # each access of ins/outs costs
        if len(args) != len(ins):
            raise VerifyException(
                f"nn.compute: {len(ins)} ins but the body takes {len(args)} arguments"
            )
        if tuple(inner.operands) != args:
            raise VerifyException(
                "nn.compute: the body's op must take the body's arguments, in order"
            )
        if tuple(terminator.operands) != inner.results:
            raise VerifyException("nn.compute: nn.yield must yield the body op's results")
        if len(outs) != len(inner.results):
            raise VerifyException(f"nn.compute: {len(outs)} outs for {len(inner.results)} results")
        halo = None
        if self.halo is not None:
            values = self.halo.get_values()
            if len(values) != 4 or min(values) < 0:
                raise VerifyException(
                    "nn.compute: halo needs 4 non-negative values [top, left, bottom, right]"
                )
            halo = self.halo_values
        for index, (operand, arg) in enumerate(zip(ins, args, strict=True)):
            _check_buffer(f"ins {index}", operand.type, arg.type, halo if index == 0 else None)
        for index, (operand, result) in enumerate(zip(outs, inner.results, strict=True)):
            _check_buffer(f"outs {index}", operand.type, result.type, None)

    @classmethod
    def parse(cls, parser: Parser) -> ComputeOp:
        def operand_list(keyword: str) -> list[SSAValue]:
            parser.parse_keyword(keyword)
            parser.parse_punctuation("(")
            if parser.parse_optional_punctuation(")") is not None:
                return []
            names = parser.parse_comma_separated_list(
                parser.Delimiter.NONE, parser.parse_unresolved_operand
            )
            parser.parse_punctuation(":")
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            parser.parse_punctuation(")")
            if len(names) != len(types):
                parser.raise_error(f"{keyword}: {len(names)} operands but {len(types)} types")
            return [parser.resolve_operand(n, t) for n, t in zip(names, types, strict=True)]

        ins = operand_list("ins")
        outs = operand_list("outs")
        halo = None
        if parser.parse_optional_keyword("halo") is not None:
            halo = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
            )
        attributes = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region()
        op = cls(ins, outs, body, halo)
        if attributes is not None:
            op.attributes.update(attributes.data)
        return op

    def print(self, printer: Printer) -> None:
        def operand_list(keyword: str, values: Sequence[SSAValue]) -> None:
            printer.print_string(f" {keyword}(")
            if values:
                printer.print_list(values, printer.print_operand)
                printer.print_string(" : ")
                printer.print_list((v.type for v in values), printer.print_attribute)
            printer.print_string(")")

        operand_list("ins", self.ins)
        operand_list("outs", self.outs)
        if (halo := self.halo_values) is not None:
            printer.print_string(f" halo [{', '.join(str(v) for v in halo)}]")
        if self.attributes:
            printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body)


def _segment(index: int) -> property:
    """The `index`-th operand segment of an nn.compute, as xDSL's accessor returns it, with
    the sizes unpacked once per op: `ins` and `outs` are read dozens of times per compute by
    the passes, the verifier, the printer and the plan checker, and xDSL unpacks the
    segment sizes from their bytes at every read."""

    def segment(op: ComputeOp) -> SSAValues[SSAValue]:
        sizes = op.properties[_SEGMENT_SIZES]
        cached = op.__dict__.get("_segment_sizes")
        if cached is None or cached[0] is not sizes:  # properties are replaced, never changed
            cached = op.__dict__["_segment_sizes"] = (sizes, sizes.get_values())  # type: ignore[attr-defined]
        values = cached[1]
        start = sum(values[:index])
        return op._operands[start : start + values[index]]  # pyright: ignore[reportPrivateUsage]

    return property(segment)


_SEGMENT_SIZES = AttrSizedOperandSegments.attribute_name
_SEGMENT_SIZE_ATTRS: dict[tuple[int, ...], DenseArrayBase] = {}


def segment_sizes(*sizes: int) -> DenseArrayBase:
    """The `operandSegmentSizes` property xDSL's builder gives an op whose variadic operand
    segments have these sizes, one attribute per distinct sizes (attributes are values)."""
    found = _SEGMENT_SIZE_ATTRS.get(sizes)
    if found is None:
        found = _SEGMENT_SIZE_ATTRS[sizes] = DenseArrayBase.from_list(i32, sizes)
    return found


ComputeOp.ins = _segment(0)  # type: ignore[assignment]
ComputeOp.outs = _segment(1)  # type: ignore[assignment]


def _check_buffer(
    what: str, buffer: Attribute, tensor: Attribute, halo: tuple[int, int, int, int] | None
) -> None:
    if isinstance(buffer, TensorType):
        if buffer != tensor:
            raise VerifyException(
                f"nn.compute: {what} is the tensor {buffer}, but the body expects {tensor}"
            )
        return
    assert isinstance(buffer, MemRefType) and isinstance(tensor, TensorType)
    expected = buffer_type(tensor, halo)
    if buffer.get_shape() != expected.get_shape() or (buffer.element_type != expected.element_type):
        raise VerifyException(
            f"nn.compute: {what} has type {buffer}, but {tensor}"
            f"{'' if halo is None else f' with halo {list(halo)}'} is stored as "
            f"{expected} (shape and element type must match; strides may differ)"
        )


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends an `nn.compute` body with the results its `outs` receive."""

    name = "nn.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(ComputeOp))
    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, values: Sequence[SSAValue]):
        values = tuple(values)
        if all(isinstance(value, SSAValue) for value in values):
            Operation.__init__(self, operands=values)  # as xDSL's builder would, directly
        else:
            super().__init__(operands=[values])


def compute_of(
    op: Operation,
    ins: Sequence[SSAValue],
    outs: Sequence[SSAValue],
    halo: Sequence[int] | None = None,
) -> ComputeOp:
    """Wraps a (detached) tensor-level `op` whose operands are to be the body's arguments."""
    block = Block(arg_types=[operand.type for operand in op.operands])
    for arg, operand in zip(block.args, op.operands, strict=True):
        arg.name_hint = operand.name_hint
    for index, arg in enumerate(block.args):
        op.operands[index] = arg
    block.add_ops([op, YieldOp(list(op.results))])
    return ComputeOp(ins, outs, Region(block), halo)


def operands_outside(op: Operation) -> tuple[ComputeOp, dict[SSAValue, SSAValue]] | None:
    """For the op in an nn.compute's body: that compute, and what each of `op`'s operands is
    outside it (an input buffer, or a tensor for a load-time constant); None for other ops
    (e.g. a detached clone)."""
    compute = op.parent_op()
    if not isinstance(compute, ComputeOp) or compute.inner is not op:
        return None
    return compute, dict(zip(op.operands, compute.ins, strict=True))


def constant_operands(op: Operation) -> set[int]:
    """The indices of `op`'s operands that are load-time constants: inputs of its nn.compute
    given as tensors, not buffers (the same read-only array on every call). None of them for
    an op outside an nn.compute (a detached clone, or an op the interpreter runs unplanned),
    whose operands may be anything on any call."""
    found = operands_outside(op)
    if found is None:
        return set()
    return {
        i for i, value in enumerate(op.operands) if isinstance(found[1][value].type, TensorType)
    }


def last_writers(compute: ComputeOp, buffer: SSAValue) -> list[ComputeOp] | None:
    """The nn.computes before `compute` in its block whose results `buffer` holds when
    `compute` runs, latest first: each wrote part of it (all of it, for one that wrote
    `buffer` itself), nothing else wrote any of its bytes since, and together they wrote
    all of them (a concat built in place: its parts written through subviews). None when
    that is not known. Other computes' `outs` are compared by byte range (views of one
    buffer at constant offsets, contiguous subviews); an op with memory effects other than
    an allocation ends the search."""
    footprint = _footprint(buffer)
    read = footprint or _extent(buffer)
    missing = [] if footprint is None else [footprint[1:]]
    writers: list[ComputeOp] = []
    op = compute.prev_op
    while op is not None:
        if isinstance(op, ComputeOp):
            for out in op.outs:
                if out is buffer:
                    return [*writers, op]
                written = _footprint(out)
                if not _overlap(read, written or _extent(out)):
                    continue
                if footprint is None or written is None or written[0] is not footprint[0]:
                    return None  # wrote some of its bytes, which ones is not known
                if any(start < written[2] and written[1] < end for start, end in missing):
                    writers.append(op)
                    missing = _without(missing, written[1], written[2])
                    if not missing:
                        return writers
        elif not (is_side_effect_free(op) or isinstance(op, memref.AllocOp)):
            return None
        op = op.prev_op
    return None


def unwritten_between(first: ComputeOp, last: ComputeOp, buffer: SSAValue) -> bool:
    """Whether no op after `first` and before `last` (in one block, `first` before `last`)
    may write any byte of `buffer`: `last` reads what it held when `first` ran. False where
    that is not known (an op with memory effects other than an allocation)."""
    extent = _footprint(buffer) or _extent(buffer)
    op = last.prev_op
    while op is not None and op is not first:
        if isinstance(op, ComputeOp):
            if any(_overlap(extent, _footprint(out) or _extent(out)) for out in op.outs):
                return False
        elif not (is_side_effect_free(op) or isinstance(op, memref.AllocOp)):
            return False
        op = op.prev_op
    return op is first


# The memory a buffer may span: (the buffer it is a view of: an allocation, an argument or
# another op's result; first byte; end).
_Extent = tuple[SSAValue, float, float]


def _extent(buffer: SSAValue) -> _Extent:
    owner = buffer.owner
    if isinstance(owner, memref.ViewOp | memref.SubviewOp | memref.ReinterpretCastOp):
        root, start, end = _extent(owner.source)
        size = _byte_size(buffer.type)
        if (
            isinstance(owner, memref.ViewOp)
            and isinstance(shift := owner.byte_shift.owner, arith.ConstantOp)
            and size is not None
        ):
            first = start + shift.value.value.data  # type: ignore[union-attr]
            return root, first, first + size
        return root, start, end  # somewhere in its source's bytes
    return buffer, 0, math.inf


def _footprint(buffer: SSAValue) -> _Extent | None:
    """Exactly the bytes `buffer` spans, when they are one range at a known place: a dense
    buffer of known size, or a contiguous subview of one (its type's offset counts from
    the start of the first buffer that is not a subview)."""
    base = buffer
    while isinstance(base.owner, memref.SubviewOp | memref.ReinterpretCastOp):
        base = base.owner.source
    root, start, end = _extent(base)
    size = _byte_size(base.type)
    if size is None or root is not base and end != start + size:
        return None  # not dense, or a view at an unknown place in its source
    if base is buffer:
        return root, start, start + size
    span = _contiguous_span(buffer.type)
    if span is None:
        return None
    first, count = span
    return root, start + first, start + first + count


def _contiguous_span(buffer_type: Attribute) -> tuple[int, int] | None:
    """(first byte, bytes) of a statically strided memref type whose elements lie in one
    row-major run from its offset; None for any other."""
    if not isinstance(buffer_type, MemRefType):
        return None
    shape, strides, offset = (
        buffer_type.get_shape(),
        buffer_type.get_strides(),
        buffer_type.get_offset(),
    )
    if (
        strides is None
        or offset is None
        or any(size < 0 for size in shape)
        or any(stride is None for stride in strides)
    ):
        return None
    expected = 1
    for size, stride in reversed(list(zip(shape, strides, strict=True))):
        if size != 1 and stride != expected:
            return None
        expected *= size
    element = element_bytes(buffer_type.element_type)
    return offset * element, math.prod(shape) * element


def _without(
    ranges: list[tuple[float, float]], start: float, end: float
) -> list[tuple[float, float]]:
    """`ranges` (disjoint byte ranges) less the bytes from `start` to `end`."""
    left = []
    for first, last in ranges:
        if first < start:
            left.append((first, min(last, start)))
        if end < last:
            left.append((max(first, end), last))
    return left


def _byte_size(buffer_type: Attribute) -> int | None:
    """The bytes of a dense, statically shaped memref type (None for any other)."""
    if not isinstance(buffer_type, MemRefType) or not isinstance(buffer_type.layout, NoneAttr):
        return None
    shape = buffer_type.get_shape()
    if any(size < 0 for size in shape):
        return None
    return math.prod(shape) * element_bytes(buffer_type.element_type)


def _overlap(a: _Extent, b: _Extent) -> bool:
    if a[0] is not b[0]:
        # Allocations are distinct from each other and from the arguments (which may be one
        # array); what another op returns may be any of them.
        return not (
            _allocated(a[0])
            and (_allocated(b[0]) or isinstance(b[0], BlockArgument))
            or _allocated(b[0])
            and isinstance(a[0], BlockArgument)
        )
    return a[1] < b[2] and b[1] < a[2]


def _allocated(buffer: SSAValue) -> bool:
    return isinstance(buffer.owner, memref.AllocOp)
