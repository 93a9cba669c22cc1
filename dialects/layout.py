"""The `layout` dialect: how a logical tensor is arranged in memory.

A layout is written in TVM's notation. Upper-case letters name whole logical axes, in the order
they are laid out in memory; a lower-case letter preceded by a factor is a block of that axis,
placed where it stands (`NCHW16c`: C split into C/16 outer blocks and an inner block of 16).
A block that does not divide its axis pads the axis up to a multiple of the block, with zeros.

The *logical* order of a tensor's dimensions is fixed by convention, not by the layout string:
the axes named by the layout, sorted by `CANONICAL_AXIS_ORDER` (N, G, O, I, C, D, H, W, then any
other letter alphabetically). So `NHWC` and `NCHW16c` both describe a tensor whose type says
NCHW, and `OIHW16i16o` describes an OIHW weight. This matches ONNX, whose graphs we import.

`LayoutSpec` is the single place where physical shapes, strides, padding and byte sizes are
computed; passes and kernels ask it and never compute strides themselves.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    FloatAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    param_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

CANONICAL_AXIS_ORDER = "NGOICDHW"
# Bytes every buffer starts on: a cache line, and what SIMD loads and oneDNN want.
BUFFER_ALIGNMENT = 64


@dataclass(frozen=True)
class Block:
    """One block of a logical axis: `factor` consecutive elements of `axis`."""

    axis: str
    factor: int


@dataclass(frozen=True)
class LayoutSpec:
    """A parsed layout string. Every dimension is either a whole axis (str) or a Block."""

    text: str
    dims: tuple[str | Block, ...]

    _TOKEN: ClassVar[re.Pattern[str]] = re.compile(r"([0-9]*)([A-Za-z])")

    @staticmethod
    @cache
    def parse(text: str) -> LayoutSpec:
        """Parses and validates `text`; raises VerifyException naming the offending part."""
        if not text:
            raise VerifyException("layout string is empty")
        dims: list[str | Block] = []
        position = 0
        for match in LayoutSpec._TOKEN.finditer(text):
            if match.start() != position:
                raise VerifyException(
                    f"layout '{text}': unexpected '{text[position : match.start()]}' "
                    f"at position {position}"
                )
            position = match.end()
            digits, letter = match.groups()
            if letter.isupper():
                if digits:
                    raise VerifyException(
                        f"layout '{text}': whole axis '{letter}' cannot have a factor "
                        f"('{digits}{letter}'); write a block in lower case, e.g. "
                        f"'{digits}{letter.lower()}'"
                    )
                if letter in dims:
                    raise VerifyException(f"layout '{text}': axis '{letter}' appears twice")
                dims.append(letter)
            else:
                if not digits:
                    raise VerifyException(
                        f"layout '{text}': block '{letter}' needs a factor, e.g. '16{letter}' "
                        f"(a whole axis is upper case: '{letter.upper()}')"
                    )
                factor = int(digits)
                if factor <= 0:
                    raise VerifyException(
                        f"layout '{text}': block '{digits}{letter}' has factor {factor}; "
                        "factors must be positive"
                    )
                dims.append(Block(letter.upper(), factor))
        if position != len(text):
            raise VerifyException(
                f"layout '{text}': unexpected '{text[position:]}' at position {position}"
            )
        axes = [d for d in dims if isinstance(d, str)]
        for d in dims:
            if isinstance(d, Block) and d.axis not in axes:
                raise VerifyException(
                    f"layout '{text}': block '{d.factor}{d.axis.lower()}' splits axis "
                    f"'{d.axis}', which the layout does not have"
                )
        return LayoutSpec(text, tuple(dims))

    # ----------------------------------------------------------------- logical view
    @property
    def axes(self) -> tuple[str, ...]:
        """Whole axes in memory order."""
        return tuple(d for d in self.dims if isinstance(d, str))

    @property
    def logical_axes(self) -> tuple[str, ...]:
        """The axes in the tensor type's (logical) order."""

        def rank(axis: str) -> tuple[int, str]:
            index = CANONICAL_AXIS_ORDER.find(axis)
            return (index if index >= 0 else len(CANONICAL_AXIS_ORDER), axis)

        return tuple(sorted(self.axes, key=rank))

    @property
    def rank(self) -> int:
        return len(self.axes)

    def blocks_of(self, axis: str) -> tuple[int, ...]:
        """Block factors of `axis`, outermost first."""
        return tuple(d.factor for d in self.dims if isinstance(d, Block) and d.axis == axis)

    def block_product(self, axis: str) -> int:
        return math.prod(self.blocks_of(axis))

    @property
    def is_blocked(self) -> bool:
        return any(isinstance(d, Block) for d in self.dims)

    @property
    def is_identity(self) -> bool:
        """True when memory order is the logical order with no blocks (e.g. NCHW)."""
        return not self.is_blocked and self.axes == self.logical_axes

    def check_rank(self, shape: Sequence[int]) -> None:
        if len(shape) != self.rank:
            raise VerifyException(
                f"layout '{self.text}' has {self.rank} axes but the tensor has rank {len(shape)}"
            )

    # ---------------------------------------------------------------- physical view
    def padded_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        """The logical shape with every blocked axis rounded up to its block product."""
        self.check_rank(shape)
        result = []
        for axis, size in zip(self.logical_axes, shape, strict=True):
            block = self.block_product(axis)
            result.append(-(-size // block) * block)
        return tuple(result)

    def physical_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        """The shape in memory order: whole axes hold the number of outer blocks."""
        padded = dict(zip(self.logical_axes, self.padded_shape(shape), strict=True))
        return tuple(
            d.factor if isinstance(d, Block) else padded[d] // self.block_product(d)
            for d in self.dims
        )

    def physical_strides(self, shape: Sequence[int]) -> tuple[int, ...]:
        """Row-major element strides of the physical shape."""
        physical = self.physical_shape(shape)
        strides = [1] * len(physical)
        for i in range(len(physical) - 2, -1, -1):
            strides[i] = strides[i + 1] * physical[i + 1]
        return tuple(strides)

    def element_count(self, shape: Sequence[int]) -> int:
        """Elements in memory, padding included."""
        return math.prod(self.physical_shape(shape))

    def byte_size(self, shape: Sequence[int], element_bytes: int) -> int:
        return self.element_count(shape) * element_bytes

    def padding_elements(self, shape: Sequence[int]) -> int:
        return self.element_count(shape) - math.prod(shape)

    # ------------------------------------------------------------- data movement
    def _split_axes(self, shape: Sequence[int]) -> tuple[list[int], list[int]]:
        """The padded logical array reshaped so that each axis becomes [outer, blocks...],
        and the permutation that brings those pieces into memory order."""
        split_shape: list[int] = []
        piece_index: dict[str | Block, int] = {}
        padded = self.padded_shape(shape)
        block_counter: dict[str, int] = {}
        for axis, size in zip(self.logical_axes, padded, strict=True):
            blocks = self.blocks_of(axis)
            piece_index[axis] = len(split_shape)
            split_shape.append(size // math.prod(blocks))
            for factor in blocks:
                split_shape.append(factor)
        permutation: list[int] = []
        for d in self.dims:
            if isinstance(d, str):
                permutation.append(piece_index[d])
            else:
                nth = block_counter.get(d.axis, 0)
                block_counter[d.axis] = nth + 1
                permutation.append(piece_index[d.axis] + 1 + nth)
        return split_shape, permutation

    def pack(self, array: np.ndarray, pad_value: float = 0.0) -> np.ndarray:
        """Logical array -> physical array (a new, contiguous array), padding with `pad_value`."""
        shape = array.shape
        padded = self.padded_shape(shape)
        if padded != tuple(shape):
            widths = [(0, p - s) for s, p in zip(shape, padded, strict=True)]
            array = np.pad(array, widths, constant_values=pad_value)
        split_shape, permutation = self._split_axes(shape)
        return np.ascontiguousarray(array.reshape(split_shape).transpose(permutation))

    def unpack(self, physical: np.ndarray, shape: Sequence[int]) -> np.ndarray:
        """Physical array -> logical array of `shape` (padding dropped)."""
        split_shape, permutation = self._split_axes(shape)
        inverse = np.argsort(permutation)
        padded = physical.transpose(inverse).reshape(self.padded_shape(shape))
        return np.ascontiguousarray(padded[tuple(slice(0, s) for s in shape)])

    def padding_mask(self, shape: Sequence[int]) -> np.ndarray:
        """A boolean array of the physical shape: True on the padding lanes."""
        return self.pack(np.zeros(shape, dtype=bool), pad_value=True)

    def zero_padding(self, physical: np.ndarray, shape: Sequence[int]) -> np.ndarray:
        """Sets the padding lanes of `physical` (a packed tensor of logical `shape`) to zero,
        in place, and returns it: kernels whose math maps 0 to non-zero restore invariant 2."""
        if self.padding_elements(shape):
            if physical.flags.c_contiguous:  # the lanes alone, not a mask of the whole tensor
                physical.reshape(-1)[self._padding_lanes(tuple(shape))] = 0
            else:
                physical[self.padding_mask(shape)] = 0
        return physical

    @lru_cache(maxsize=256)  # noqa: B019 (specs are interned by `parse`; shapes are few)
    def _padding_lanes(self, shape: tuple[int, ...]) -> np.ndarray:
        """The flat indices of the padding lanes of the physical array of logical `shape`."""
        return np.flatnonzero(self.padding_mask(shape))


@irdl_attr_definition
class LayoutAttr(ParametrizedAttribute):
    """`#layout.layout<"NCHW16c">`: a dense tensor's physical arrangement (see LayoutSpec)."""

    name = "layout.layout"
    spec_text: StringAttr = param_def()

    def __init__(self, text: str | StringAttr):
        super().__init__(StringAttr(text) if isinstance(text, str) else text)

    @property
    def spec(self) -> LayoutSpec:
        return LayoutSpec.parse(self.spec_text.data)

    def verify(self) -> None:
        self.spec  # noqa: B018  (parsing validates the string)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            start = parser.pos
            text = parser.parse_str_literal(' for the layout, e.g. "NCHW16c"')
            try:
                LayoutSpec.parse(text)
            except VerifyException as error:
                parser.raise_error(str(error), start, parser.pos)
        return [StringAttr(text)]

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string_literal(self.spec_text.data)


STORAGE_KINDS = ("dense", "csr")


@irdl_attr_definition
class StorageAttr(ParametrizedAttribute):
    """`#layout.storage<"csr">`: how a tensor's values are stored: dense or CSR (2-D only)."""

    name = "layout.storage"
    kind: StringAttr = param_def()

    def __init__(self, kind: str):
        super().__init__(StringAttr(kind))

    def verify(self) -> None:
        if self.kind.data not in STORAGE_KINDS:
            raise VerifyException(
                f"unknown storage '{self.kind.data}'; expected one of {', '.join(STORAGE_KINDS)}"
            )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            start = parser.pos
            kind = parser.parse_str_literal(' for the storage ("dense" or "csr")')
            try:
                cls(kind)
            except VerifyException as error:
                parser.raise_error(str(error), start, parser.pos)
        return [StringAttr(kind)]

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string_literal(self.kind.data)


def layout_of(tensor_type: Attribute) -> LayoutSpec | None:
    """The blocked/permuted layout a tensor type carries in its encoding, if any."""
    if isinstance(tensor_type, TensorType) and isinstance(tensor_type.encoding, LayoutAttr):
        return tensor_type.encoding.spec
    return None


def _memory_runs(tensor_type: TensorType[Attribute]) -> tuple[tuple[int, int, int], ...] | None:
    """Where each element of a dense `tensor_type` lies in its buffer, as its physical dims
    in memory order: (logical axis, extent, elements of that axis one step spans), the dims
    of extent 1 left out and consecutive pieces of one axis joined; None where the buffer
    has padding lanes."""
    shape = tensor_type.get_shape()
    spec = layout_of(tensor_type)
    if spec is None:
        return tuple((axis, size, 1) for axis, size in enumerate(shape) if size != 1)
    if spec.padding_elements(shape):
        return None
    index = {axis: i for i, axis in enumerate(spec.logical_axes)}
    runs = []
    for position, (dim, extent) in enumerate(
        zip(spec.dims, spec.physical_shape(shape), strict=True)
    ):
        axis = dim if isinstance(dim, str) else dim.axis
        inner = spec.dims[position + 1 :]
        unit = math.prod(d.factor for d in inner if isinstance(d, Block) and d.axis == axis)
        if extent == 1:
            continue
        if runs and runs[-1][0] == index[axis] and runs[-1][2] == extent * unit:
            runs[-1] = (index[axis], runs[-1][1] * extent, unit)  # C/16 then 16c: one run
        else:
            runs.append((index[axis], extent, unit))
    return tuple(runs)


def same_bytes(source: Attribute, target: Attribute) -> bool:
    """Whether two dense tensor types of one shape put every element at the same place of
    a buffer of the same size, without padding (NCHW16c and NHWC at 16 channels; NCHW and
    NHWC at one pixel): a reorder between them moves nothing."""
    if not (isinstance(source, TensorType) and isinstance(target, TensorType)):
        return False
    if storage_of(source) != "dense" or storage_of(target) != "dense":
        return False
    if source.get_shape() != target.get_shape() or source.element_type != target.element_type:
        return False
    runs = _memory_runs(source)
    return runs is not None and runs == _memory_runs(target)


def transposed_same_bytes(source: Attribute, target: Attribute, perm: Sequence[int]) -> bool:
    """Whether a transpose by `perm` (target axis i is source axis perm[i]) of a dense
    tensor type to another puts every element at the same place of a buffer of the same
    size, without padding: a plain [N, H, W, C] transposed to [N, C, H, W] in NHWC, or an NHWC
    [N, C, H, W] to a plain [N, H, W, C]. Such a transpose moves nothing."""
    if not (isinstance(source, TensorType) and isinstance(target, TensorType)):
        return False
    if storage_of(source) != "dense" or storage_of(target) != "dense":
        return False
    if source.element_type != target.element_type:
        return False
    source_runs, target_runs = _memory_runs(source), _memory_runs(target)
    if source_runs is None or target_runs is None:
        return False
    return tuple((perm[axis], extent, unit) for axis, extent, unit in target_runs) == source_runs


def storage_of(tensor_type: Attribute) -> str:
    """'csr' for a tensor type encoded `#layout.storage<"csr">`, 'dense' otherwise."""
    if isinstance(tensor_type, TensorType) and isinstance(tensor_type.encoding, StorageAttr):
        return tensor_type.encoding.kind.data
    return "dense"


#: No buffer can hold more bytes than a signed 64-bit size (numpy's and MLIR's index type).
MAX_TENSOR_BYTES = 2**63 - 1


def verify_encoding(tensor_type: TensorType[Attribute], what: str) -> None:
    """Checks that a tensor's encoding is one of ours and fits its rank, and that its bytes
    (padding included) fit in a 64-bit size; `what` names the value in the message (e.g.
    "nn.conv2d: operand 'input'")."""
    encoding = tensor_type.encoding
    shape = tensor_type.get_shape()
    if all(d > 0 for d in shape):
        spec = (
            encoding.spec
            if isinstance(encoding, LayoutAttr) and (encoding.spec.rank == len(shape))
            else None
        )
        count = math.prod(shape) if spec is None else spec.element_count(shape)
        width = getattr(tensor_type.element_type, "bitwidth", 8)
        if count * max(1, width // 8) > MAX_TENSOR_BYTES:
            raise VerifyException(
                f"{what}: {tensor_type} has {count:,} elements, too many for a 64-bit "
                f"byte size (at most {MAX_TENSOR_BYTES:,} bytes)"
            )
    if isinstance(encoding, LayoutAttr):
        try:
            encoding.spec.check_rank(shape)
        except VerifyException as error:
            raise VerifyException(f"{what}: {error}") from None
    elif isinstance(encoding, StorageAttr):
        if encoding.kind.data == "csr" and len(shape) != 2:
            raise VerifyException(f"{what}: CSR storage needs a 2-D tensor, got rank {len(shape)}")
    elif not isinstance(encoding, NoneAttr):
        raise VerifyException(
            f"{what}: unknown tensor encoding {encoding}; expected #layout.layout<...> "
            "or #layout.storage<...>"
        )


def buffer_bytes(value_type: Attribute) -> int:
    """The bytes a run-time value of `value_type` occupies (layout padding included); 0 for
    types that are not statically shaped tensors or memrefs."""
    if not isinstance(value_type, TensorType | MemRefType):
        return 0
    shape = value_type.get_shape()
    if any(d < 0 for d in shape):
        return 0
    spec = layout_of(value_type)
    count = math.prod(shape) if spec is None else spec.element_count(shape)
    return count * max(1, getattr(value_type.element_type, "bitwidth", 8) // 8)


def element_bytes(element_type: Attribute) -> int:
    """Bytes per element of a float or integer element type."""
    if isinstance(element_type, AnyFloat):
        return element_type.bitwidth // 8
    if isinstance(element_type, IntegerType):
        return max(1, element_type.width.data // 8)
    raise VerifyException(f"unsupported element type {element_type}")


@irdl_op_definition
class ReorderOp(IRDLOperation):
    """Converts a tensor between layouts or storages; values and logical shape are unchanged.

    `%y = layout.reorder %x : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32, #layout.layout<"NCHW8c">>`
    """

    name = "layout.reorder"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, result_type: TensorType[Attribute]):
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self) -> None:
        source, target = self.input.type, self.output.type
        assert isinstance(source, TensorType) and isinstance(target, TensorType)
        if source.get_shape() != target.get_shape():
            raise VerifyException(
                f"layout.reorder: logical shape changes from {list(source.get_shape())} to "
                f"{list(target.get_shape())}; a reorder only rearranges memory"
            )
        if source.element_type != target.element_type:
            raise VerifyException(
                f"layout.reorder: element type changes from {source.element_type} to "
                f"{target.element_type}"
            )
        verify_encoding(source, "layout.reorder: input")
        verify_encoding(target, "layout.reorder: result")


@irdl_op_definition
class FillBorderOp(IRDLOperation):
    """Writes `value` into the border of a buffer allocated with a halo: `halo` = [top, left,
    bottom, right] rows/columns around its H and W axes (see `buffer_type`). The interior is
    left alone: the producer of the value writes it.

    `layout.fill_border %buf axes [2, 3] halo [1, 1, 1, 1] value 0.0 : f32
        : memref<1x2x10x10x8xf32>`
    """

    name = "layout.fill_border"
    buffer = operand_def(MemRefType)
    axes = prop_def(DenseArrayBase.constr(i64))
    halo = prop_def(DenseArrayBase.constr(i64))
    value = prop_def(FloatAttr)
    assembly_format = "$buffer `axes` $axes `halo` $halo `value` $value attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue, axes: Sequence[int], halo: Sequence[int], value: float):
        buffer_type_ = buffer.type
        if not isinstance(buffer_type_, MemRefType):  # it was a bare AssertionError
            raise VerifyException(
                f"layout.fill_border: the buffer must be a memref, got {buffer_type_}"
            )
        super().__init__(
            operands=[buffer],
            properties={
                "axes": DenseArrayBase.from_list(i64, tuple(axes)),
                "halo": DenseArrayBase.from_list(i64, tuple(halo)),
                "value": FloatAttr(value, buffer_type_.element_type),
            },
        )

    def verify_(self) -> None:
        halo = self.halo.get_values()
        if len(halo) != 4 or min(halo) < 0:
            raise VerifyException(
                f"layout.fill_border: halo needs 4 non-negative values, got {list(halo)}"
            )
        buffer_type_ = self.buffer.type
        assert isinstance(buffer_type_, MemRefType)
        if self.value.type != buffer_type_.element_type:
            # The runtime casts it: `1.0e300 : f64` filled an f32 border with inf.
            raise VerifyException(
                f"layout.fill_border: value {self.value.value.data} : {self.value.type} is "
                f"not of the buffer's element type {buffer_type_.element_type}"
            )
        axes = self.axes.get_values()
        shape = buffer_type_.get_shape()
        if len(axes) != 2 or not all(0 <= a < len(shape) for a in axes):
            raise VerifyException(
                f"layout.fill_border: axes {list(axes)} must name the H and W dimensions "
                f"of the rank-{len(shape)} buffer"
            )
        if axes[0] == axes[1]:
            # The other axis's border was left unfilled: NaN read as padding.
            raise VerifyException(
                f"layout.fill_border: axes {list(axes)} name dimension {axes[0]} twice; "
                "they must be the two distinct dimensions H and W"
            )
        for axis, (before, after) in zip(
            axes, ((halo[0], halo[2]), (halo[1], halo[3])), strict=True
        ):
            if before + after >= shape[axis]:
                raise VerifyException(
                    f"layout.fill_border: halo {list(halo)} leaves no interior along "
                    f"dimension {axis} of size {shape[axis]}"
                )


Layout = Dialect("layout", [ReorderOp, FillBorderOp], [LayoutAttr, StorageAttr])


def encoding_name(tensor_type: Attribute) -> str:
    """How a tensor type is stored, in the vocabulary of `#nn.kernel`: "" (plain), a layout
    string such as "NCHW8c", or "csr"."""
    if isinstance(tensor_type, TensorType):
        if isinstance(tensor_type.encoding, LayoutAttr):
            return tensor_type.encoding.spec_text.data
        if isinstance(tensor_type.encoding, StorageAttr) and tensor_type.encoding.kind.data != (
            "dense"
        ):
            return tensor_type.encoding.kind.data
    return ""


def with_encoding_name(tensor_type: TensorType[Attribute], name: str) -> TensorType[Attribute]:
    """`tensor_type` with the encoding `encoding_name` would call `name`."""
    encoding: Attribute
    if name == "":
        encoding = NoneAttr()
    elif name in STORAGE_KINDS:
        encoding = StorageAttr(name)
    else:
        encoding = LayoutAttr(name)
    return TensorType(tensor_type.element_type, tensor_type.get_shape(), encoding)


def spatial_axes(tensor_type: TensorType[Attribute]) -> tuple[int, int]:
    """Positions of H and W among the physical dims of a rank-4 NCHW-family tensor."""
    spec = layout_of(tensor_type) or LayoutSpec.parse("NCHW")
    return spec.dims.index("H"), spec.dims.index("W")


def with_halo(tensor_type: TensorType[Attribute], halo: Sequence[int]) -> TensorType[Attribute]:
    """The logical NCHW tensor type grown by `halo` = [top, left, bottom, right]."""
    n, c, h, w = tensor_type.get_shape()
    return TensorType(
        tensor_type.element_type,
        [n, c, h + halo[0] + halo[2], w + halo[1] + halo[3]],
        tensor_type.encoding,
    )


def buffer_type(
    tensor_type: TensorType[Attribute], halo: Sequence[int] | None = None
) -> MemRefType[Attribute]:
    """The contiguous memref that stores `tensor_type`: its physical shape (padding
    included), grown by `halo` = [top, left, bottom, right] rows/columns of border around the
    H and W axes. This is the one place where bufferization gets buffer shapes from."""
    return _buffer_type(tensor_type, None if halo is None else tuple(halo))


@lru_cache(maxsize=4096)
def _buffer_type(
    tensor_type: TensorType[Attribute], halo: tuple[int, ...] | None
) -> MemRefType[Attribute]:
    """`buffer_type`, once per type: a model has few distinct types, and building a memref
    type (xDSL verifies its parameters) costs as much as verifying the op that asks for it."""
    if storage_of(tensor_type) == "csr":
        raise VerifyException(f"{tensor_type}: CSR tensors have no dense buffer")
    spec = layout_of(tensor_type)
    logical = tensor_type.get_shape()
    shape = list(logical if spec is None else spec.physical_shape(logical))
    if halo is not None:
        h, w = spatial_axes(tensor_type)
        shape[h] += halo[0] + halo[2]
        shape[w] += halo[1] + halo[3]
    return MemRefType(tensor_type.element_type, shape)
