"""Helpers every `nn` op uses and the base class `NNOp`: static tensors of one element type, a
result type equal to the op's shape rule.

Element types: floats (bf16, f16, f32, f64) for every op (bf16 as `convert-to-bf16` leaves
it: the kernels that compute it in bf16, the reference kernels in f32 rounded per op); the
integer types of quantized data (`ui8`, `i8` read as signed, `i32` for biases) only for the
ops that define them: the type-agnostic ones (movement, max pooling, constants:
`ELEMENTS = "any"`) and the quantized ops of `quantized.py`; and integer arithmetic on i32
and i64 (`NNOp.INTEGER_ARITHMETIC`: a language model's position ids computed from its mask).
See the `nn` dialect's docstring for why scales and zero points are not part of the type."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
)
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects.kernel_attr import verify_kernel_fits
from nnlayout.dialects.layout import verify_encoding

Shape = tuple[int, ...]
Value = SSAValue | Operation

ui8 = IntegerType(8, Signedness.UNSIGNED)
#: Integer element types nn values may have: quantized activations and weights (ui8, i8 read
#: as signed, as ONNX's int8) and biases (i32).
INTEGER_TYPES: tuple[IntegerType, ...] = (ui8, i8, i32)
#: Element types that are not numbers to compute on: masks (i1) and indices (i64, token ids
#: read by nn.gather). Only ops with `NNOp.NON_NUMERIC` and those that check their own
#: element types (nn.gather, nn.scatter, nn.where, nn.compare, nn.logical) take them, and those
#: with `NNOp.INTEGER_ARITHMETIC` compute on i64.
NON_NUMERIC_TYPES: tuple[IntegerType, ...] = (i1, i64)
#: The integer types the ops with `NNOp.INTEGER_ARITHMETIC` compute on (exactly, wrapping on
#: overflow as ONNX's integers do).
ARITHMETIC_INTEGER_TYPES: tuple[IntegerType, ...] = (i32, i64)
#: The element types of quantized activations and weights.
QUANTIZED_TYPES: tuple[IntegerType, ...] = (ui8, i8)


@functools.cache
def bf16_dtype() -> np.dtype:
    """numpy has no bf16: ml_dtypes' bfloat16 holds bf16 values, whose casts from float32
    round to nearest even. Imported on first use: ml_dtypes takes about a second to import,
    which every tool's start-up would pay for models that have no bf16."""
    import ml_dtypes

    return np.dtype(ml_dtypes.bfloat16)


def is_bf16_array(value: object) -> bool:
    """Whether `value` is an array of bf16 (tells without importing ml_dtypes)."""
    dtype = getattr(value, "dtype", None)
    return dtype is not None and dtype.name == "bfloat16"


_NUMPY_DTYPES: dict[Attribute, np.dtype] = {
    Float16Type(): np.dtype(np.float16),
    Float32Type(): np.dtype(np.float32),
    Float64Type(): np.dtype(np.float64),
    ui8: np.dtype(np.uint8),
    i8: np.dtype(np.int8),
    i32: np.dtype(np.int32),
    i1: np.dtype(np.bool_),
    i64: np.dtype(np.int64),
}


def numpy_dtype(element_type: Attribute) -> np.dtype | None:
    """The numpy dtype of run-time values of an nn element type (i8 is signed: int8, i1 a
    mask: bool); None for a type nn values cannot have."""
    if isinstance(element_type, BFloat16Type):
        return bf16_dtype()
    return _NUMPY_DTYPES.get(element_type)


def is_float_type(element_type: Attribute) -> bool:
    return isinstance(element_type, BFloat16Type | Float16Type | Float32Type | Float64Type)


def integer_range(element_type: Attribute) -> tuple[int, int]:
    """The smallest and largest value of an integer element type (signless read as signed)."""
    assert isinstance(element_type, IntegerType)
    width = element_type.width.data
    if element_type.signedness.data == Signedness.UNSIGNED:
        return 0, (1 << width) - 1
    return -(1 << (width - 1)), (1 << (width - 1)) - 1


# --------------------------------------------------------------------------- helpers
def i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, tuple(values))


def ints(attr: DenseArrayBase) -> tuple[int, ...]:
    return tuple(int(v) for v in attr.get_values())


def tensor_type(value: Value) -> TensorType[Attribute]:
    """The tensor type of `value`; a VerifyException for any other type (the builders' shape
    rules read it: a pattern handing them a memref got a bare AssertionError)."""
    value_type = (value if isinstance(value, SSAValue) else SSAValue.get(value)).type
    if not isinstance(value_type, TensorType):
        raise VerifyException(f"nn ops take tensors; got a value of type {value_type}")
    return value_type


def shape_of(value: Value) -> Shape:
    return tuple(tensor_type(value).get_shape())


def with_shape(like: Value, shape: Sequence[int]) -> TensorType[Attribute]:
    """A plain tensor type of `shape` with the element type of `like`."""
    return TensorType(tensor_type(like).element_type, shape)


def normalize_axis(op_name: str, axis: int, rank: int, inclusive_end: bool = False) -> int:
    """ONNX-style axis in [-rank, rank) (or [-rank, rank] for flatten) -> non-negative."""
    upper = rank + 1 if inclusive_end else rank
    if not -rank <= axis < upper:
        raise VerifyException(
            f"{op_name}: axis {axis} is out of range for rank {rank} "
            f"(expected {-rank} <= axis < {upper})"
        )
    return axis + rank if axis < 0 else axis


def broadcast_shapes(op_name: str, *shapes: Shape) -> Shape:
    """numpy/ONNX multidirectional broadcasting, with a message naming the clash."""
    if not shapes:
        raise VerifyException(f"{op_name}: needs at least one input")
    rank = max(len(s) for s in shapes)
    result = []
    for i in range(rank):
        sizes = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            listed = ", ".join(str(list(s)) for s in shapes)
            raise VerifyException(
                f"{op_name}: shapes {listed} do not broadcast (dimension {i} of the "
                f"broadcast result has sizes {sorted(sizes)})"
            )
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def _require_len(op_name: str, name: str, values: Sequence[int], length: int) -> None:
    if len(values) != length:
        raise VerifyException(f"{op_name}: {name} needs {length} values, got {list(values)}")


def _require_positive(op_name: str, name: str, values: Sequence[int]) -> None:
    if any(v <= 0 for v in values):
        raise VerifyException(f"{op_name}: {name} must be positive, got {list(values)}")


def _require_non_negative(op_name: str, name: str, values: Sequence[int]) -> None:
    if any(v < 0 for v in values):
        raise VerifyException(f"{op_name}: {name} must be non-negative, got {list(values)}")


def _require_rank(op_name: str, name: str, shape: Shape, rank: int) -> None:
    if len(shape) != rank:
        raise VerifyException(
            f"{op_name}: {name} must have rank {rank}, got {len(shape)} ({list(shape)})"
        )


def _window_output(
    op_name: str,
    size: int,
    kernel: int,
    stride: int,
    pad_begin: int,
    pad_end: int,
    dilation: int,
    ceil_mode: bool,
    axis_name: str,
) -> int:
    pad_total = pad_begin + pad_end
    effective = dilation * (kernel - 1) + 1
    span = size + pad_total - effective
    # With ceil_mode a window may run past the end, so even a too-large first window counts.
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + pad_begin:
        # ONNX/PyTorch: the last window must start inside the input or its leading pad.
        out -= 1
    if out < 1:
        raise VerifyException(
            f"{op_name}: window of extent {effective} (kernel {kernel}, dilation {dilation}) "
            f"does not fit the padded {axis_name} size {size + pad_total}"
        )
    return out


# ------------------------------------------------------------------------ base class
_CHECKED_TYPES: set[Attribute] = set()  # types that passed _check_type (a big model has few)


def _check_type(value_type: Attribute, what: str) -> None:
    """A static, non-empty tensor of a float, quantized integer or mask element type (bf16,
    f16, f32, f64, ui8, i8, i32, i1, i64) with one of our encodings; `what` names the value. Which
    of these an op takes is its own verifier's business (`NNOp.ELEMENTS`, the quantized ops)."""
    if value_type in _CHECKED_TYPES:
        return
    if not isinstance(value_type, TensorType):
        raise VerifyException(f"{what} is not a tensor")
    shape = value_type.get_shape()
    if any(d < 0 for d in shape):
        raise VerifyException(
            f"{what} has a dynamic dimension ({value_type}); nn ops need static shapes"
        )
    if any(d == 0 for d in shape):
        raise VerifyException(
            f"{what} has a zero-size dimension ({value_type}); empty tensors are not supported"
        )
    verify_encoding(value_type, what)
    element_type = value_type.element_type
    if not is_float_type(element_type) and element_type not in (*INTEGER_TYPES, *NON_NUMERIC_TYPES):
        # What the kernels and the runtime hold (bf16 compiled, then no tool could run it).
        hint = ""
        if element_type == IntegerType(8, Signedness.SIGNED):
            hint = " (write signed 8-bit data as i8, read as signed like ONNX's int8)"
        raise VerifyException(
            f"{what} has element type {element_type}; nn ops compute on bf16, f16, f32 or f64 "
            f"and hold quantized data as ui8 or i8 (i32 for biases), masks as i1 and indices "
            f"as i64{hint}"
        )
    if len(_CHECKED_TYPES) > 4096:
        _CHECKED_TYPES.clear()
    _CHECKED_TYPES.add(value_type)


class NNOp(IRDLOperation):
    """Common verification: static positive shapes, known encodings, one element type for all
    operands and results, and a result type equal to the op's shape rule.

    `ELEMENTS` says which element types the op defines: "float" (the default: arithmetic on
    ui8 data would ignore its scale and zero point, so it is refused) or "any" (ops that move
    or select elements without computing on them, exact on quantized data). The quantized ops
    override `verify_element_types`."""

    ELEMENTS: ClassVar[str] = "float"
    #: Whether the op also computes on i32 and i64 integers (`ARITHMETIC_INTEGER_TYPES`):
    #: the index arithmetic exporters write (RoBERTa's position ids are a cumulative sum of
    #: its mask, times the mask, plus the padding index).
    INTEGER_ARITHMETIC: ClassVar[bool] = False

    def result_shape(self) -> Shape:
        """The logical result shape the op's shape rule gives for its operands."""
        raise NotImplementedError

    def verify_element_types(self) -> None:
        """One element type for every operand and result, a float unless `ELEMENTS` is "any"."""
        element_type: Attribute | None = None
        for kind, values in (("operand", self.operands), ("result", self.results)):
            for index, value in enumerate(values):
                value_element = tensor_type(value).element_type
                if element_type is None:
                    element_type = value_element
                elif value_element != element_type:
                    raise VerifyException(
                        f"{self.name}: {kind} {index} has element type "
                        f"{value_element}, expected {element_type} like operand 0"
                    )
        if self.INTEGER_ARITHMETIC and element_type in ARITHMETIC_INTEGER_TYPES:
            return
        if element_type in NON_NUMERIC_TYPES and not getattr(self, "NON_NUMERIC", False):
            raise VerifyException(
                f"{self.name}: does not take i1 (mask) or i64 (index) data; masks are made by "
                "nn.compare and read by nn.where, indices are read by nn.gather and computed "
                "on by nn.add, nn.sub, nn.mul, nn.max, nn.min and nn.cumsum, and nn.cast "
                "converts either"
            )
        float_only = self.ELEMENTS == "float" and element_type is not None
        if float_only and not is_float_type(element_type):
            raise VerifyException(
                f"{self.name}: computes on floats (bf16, f16, f32, f64), got {element_type} "
                "data; quantized data needs nn.dequantize first or a quantized op "
                "(nn.qconv2d, nn.qmatmul, nn.qadd, nn.qmul, nn.qglobal_avg_pool, "
                "nn.qavg_pool2d, nn.qconcat)"
            )

    def verify_(self) -> None:
        verify_kernel_fits(self)
        for kind, values in (("operand", self.operands), ("result", self.results)):
            for index, value in enumerate(values):
                _check_type(value.type, f"{self.name}: {kind} {index}")
        self.verify_element_types()
        expected = self.result_shape()
        actual = shape_of(self.results[0])
        if tuple(actual) != tuple(expected):
            raise VerifyException(
                f"{self.name}: result shape {list(actual)} does not match the inferred shape "
                f"{list(expected)}"
            )


class AlongAxisOp(NNOp):
    """An op along one `axis` of its `input` (ONNX's, -rank..rank-1) whose result has the
    input's shape: nn.softmax, nn.cumsum."""

    @property
    def normalized_axis(self) -> int:
        rank = len(shape_of(self.input))  # type: ignore[attr-defined]
        return normalize_axis(self.name, self.axis.value.data, rank)  # type: ignore[attr-defined]

    def result_shape(self) -> Shape:
        self.normalized_axis  # noqa: B018  (range check)
        return shape_of(self.input)  # type: ignore[attr-defined]
