"""Dynamic quantization: `nn.dynamic_range`, `nn.dynamic_scale`, `nn.dynamic_zero_point`,
`nn.dynamic_quantize`, `nn.matmul_integer`, `nn.matmul_integer_to_float`, `nn.conv_integer` and
`nn.cast` (ONNX's DynamicQuantizeLinear, MatMulInteger, MatMulInteger -> Cast -> Mul [-> Add]
fused, ConvInteger and Cast from an integer type to float32).

Dynamic quantization (onnxruntime's `quantize_dynamic`) quantizes an activation with a scale
and zero point computed from its own range at run time, then multiplies integers:

    x_q, x_scale, x_zp = DynamicQuantizeLinear(x)
    y = Cast(MatMulInteger(x_q, w_q, x_zp, w_zp), float) * (x_scale * w_scale) + bias

The parameters of `x_q` exist only at run time, so they cannot be properties of the ops that
read it, as the parameters of the static forms are (`quantized.py`). They are values here:
rank-0 tensors (`tensor<f32>` scale, `tensor<ui8>` zero point), operands of the ops that need
them. What is known when compiling stays a property, as in `quantized.py`: the weight's zero
point (`b_zero_point`, `w_zero_point`, absent = 0), which a kernel such as oneDNN's must know
when it builds its primitive. DynamicQuantizeLinear's three outputs are three ops of one
result each (`nn.dynamic_scale`, `nn.dynamic_zero_point`, `nn.dynamic_quantize`), because
kernels, buffers and the generated module compute one result per op. Each of the first two
reads the input's range; `share-dynamic-range` makes them read it once, from an
`nn.dynamic_range` of the input (their value of [lo, hi] is their value of x).

    %s = nn.dynamic_scale %x : tensor<4x8xf32> -> tensor<f32>
    %z = nn.dynamic_zero_point %x : tensor<4x8xf32> -> tensor<ui8>
    %q = nn.dynamic_quantize %x, %s, %z : (tensor<4x8xf32>, tensor<f32>, tensor<ui8>)
        -> tensor<4x8xui8>
    %p = nn.matmul_integer %q, %w zero_point %z {b_zero_point = dense<0> : tensor<i8>}
        : (tensor<4x8xui8>, tensor<8x16xi8>, tensor<ui8>) -> tensor<4x16xi32>
    %f = nn.cast %p : tensor<4x16xi32> -> tensor<4x16xf32>

Semantics, exactly ONNX's (its reference evaluator): with lo = min(0, min(x)) and
hi = max(0, max(x)) in f32, scale = (hi - lo) / 255 (1 / 255 when hi = lo), zero point =
round_half_to_even(clamp(0 - lo / scale, 0, 255)), and `nn.dynamic_quantize` is
QuantizeLinear with those: saturate(round_half_to_even(x / scale) + zero_point). The integer
products sum (a - a_zero_point) * (b - b_zero_point) in i32; a convolution's padding holds
x's zero point (its centred value is 0). `nn.cast` converts ui8/i8/i32 to f32, rounding to
nearest even beyond 2^24 as ONNX's Cast.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, f32, i32
from xdsl.ir import Attribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects.nn.base import (
    QUANTIZED_TYPES,
    NNOp,
    Shape,
    Value,
    integer_range,
    shape_of,
    tensor_type,
    ui8,
)
from nnlayout.dialects.nn.linear import CONV_WINDOW_SYNTAX, ConvWindowOp
from nnlayout.dialects.nn.quantized import QuantizedOp, checked_element_type
from nnlayout.dialects.nn.shape_rules import conv2d_shape, matmul_shape

_DENSE = DenseIntOrFPElementsAttr


def _scalar(op: NNOp, what: str, value: Value, allowed: Sequence[Attribute]) -> Attribute:
    """`value` is a rank-0 tensor of one of `allowed`; its element type."""
    if shape_of(value) != ():
        raise VerifyException(
            f"{op.name}: {what} must be a scalar (rank 0), got shape {list(shape_of(value))}"
        )
    return checked_element_type(op, what, value, allowed)


def zero_point_values(op: NNOp, name: str) -> np.ndarray:
    """The constant zero point property `name` as int64 values (0 when absent)."""
    attr = op.properties.get(name)
    if not isinstance(attr, _DENSE):
        return np.zeros((), np.int64)
    shape = tuple(attr.type.get_shape())
    return np.asarray(attr.get_values(), dtype=np.int64).reshape(shape)


def zero_point_property(
    name: str, values: np.ndarray | None, element_type: Attribute
) -> dict[str, Attribute]:
    """A constant zero point (int values of `element_type`, rank 0 or 1) as the property
    `name`; nothing when there is none or they are all 0 (the default)."""
    if values is None or not np.any(values):
        return {}
    values = np.asarray(values)
    attr = _DENSE.from_list(
        TensorType(element_type, values.shape), [int(v) for v in values.reshape(-1)]
    )
    return {name: attr}


def _verify_zero_point(op: NNOp, name: str, element_type: Attribute, length: int) -> None:
    """The property `name`, when given, is a dense attribute of `element_type`: a scalar or
    `length` values, within the type's range (the parser checks that)."""
    attr = op.properties.get(name)
    if attr is None:
        return
    assert isinstance(attr, _DENSE)
    shape = tuple(attr.type.get_shape())
    if attr.type.get_element_type() != element_type or shape not in ((), (length,)):
        raise VerifyException(
            f"{op.name}: {name} must be a scalar or {length} values of {element_type}, "
            f"got {attr.type}"
        )
    low, high = integer_range(element_type)
    values = zero_point_values(op, name)
    if np.any(values < low) or np.any(values > high):
        raise VerifyException(f"{op.name}: {name} is outside {element_type}'s range")


# ------------------------------------------------------------ run-time quantization parameters
class _DynamicParamOp(QuantizedOp):
    """One of DynamicQuantizeLinear's parameters, computed from f32 `input`'s range."""

    input = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"
    RESULT_TYPE: ClassVar[Attribute] = f32

    def __init__(self, input: Value):
        super().__init__(operands=[input], result_types=[TensorType(self.RESULT_TYPE, ())])

    def result_shape(self) -> Shape:
        return ()

    def verify_element_types(self) -> None:
        checked_element_type(self, "the input", self.input, (f32,))
        checked_element_type(self, "the result", self.output, (self.RESULT_TYPE,))


@irdl_op_definition
class DynamicRangeOp(QuantizedOp):
    """DynamicQuantizeLinear's range of f32 `input`: [min(0, min(x)), max(0, max(x))], a
    tensor<2xf32> (NaN where x holds one). `nn.dynamic_scale` and `nn.dynamic_zero_point` of
    it are theirs of x (the range already holds 0), so the two read x's range once
    (`share-dynamic-range`) rather than twice."""

    name = "nn.dynamic_range"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: Value):
        super().__init__(operands=[input], result_types=[TensorType(f32, (2,))])

    def result_shape(self) -> Shape:
        return (2,)

    def verify_element_types(self) -> None:
        checked_element_type(self, "the input", self.input, (f32,))
        checked_element_type(self, "the result", self.output, (f32,))


@irdl_op_definition
class DynamicScaleOp(_DynamicParamOp):
    """DynamicQuantizeLinear's y_scale: (max(0, max(x)) - min(0, min(x))) / 255 in f32, 1 / 255
    when that range is empty; f32 tensor -> tensor<f32>."""

    name = "nn.dynamic_scale"


@irdl_op_definition
class DynamicZeroPointOp(_DynamicParamOp):
    """DynamicQuantizeLinear's y_zero_point: round_half_to_even(clamp(-min(0, min(x)) /
    scale, 0, 255)) with `nn.dynamic_scale`'s scale; f32 tensor -> tensor<ui8>."""

    name = "nn.dynamic_zero_point"
    RESULT_TYPE: ClassVar[Attribute] = ui8


@irdl_op_definition
class DynamicQuantizeOp(QuantizedOp):
    """QuantizeLinear with run-time parameters (DynamicQuantizeLinear's y): f32 `input`, a
    rank-0 f32 `scale` and a rank-0 ui8/i8 `zero_point` -> saturate(round_half_to_even(input /
    scale) + zero_point), of the zero point's type."""

    name = "nn.dynamic_quantize"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    zero_point = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $scale `,` $zero_point attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, input: Value, scale: Value, zero_point: Value):
        element_type = tensor_type(zero_point).element_type
        super().__init__(
            operands=[input, scale, zero_point],
            result_types=[TensorType(element_type, shape_of(input))],
        )

    def result_shape(self) -> Shape:
        return shape_of(self.input)

    def verify_element_types(self) -> None:
        checked_element_type(self, "the input", self.input, (f32,))
        _scalar(self, "the scale", self.scale, (f32,))
        element_type = _scalar(self, "the zero point", self.zero_point, QUANTIZED_TYPES)
        checked_element_type(self, "the result", self.output, (element_type,))


# ------------------------------------------------------------------------- integer products
class _IntegerProductOp(QuantizedOp):
    """A product of quantized integers summed in i32 (MatMulInteger, ConvInteger): the left
    operand's zero point a rank-0 operand (known at run time), the right one's a property."""

    LEFT: ClassVar[str] = "a"
    RIGHT: ClassVar[str] = "b"
    RESULT_TYPE: ClassVar[Attribute] = i32

    def verify_operands(self, left: Value, right: Value, zero_point: Value | None) -> None:
        left_type = checked_element_type(self, self.LEFT, left, QUANTIZED_TYPES)
        right_type = checked_element_type(self, self.RIGHT, right, QUANTIZED_TYPES)
        if zero_point is not None:
            _scalar(self, f"{self.LEFT}'s zero point", zero_point, (left_type,))
        checked_element_type(self, "the result", self.results[0], (self.RESULT_TYPE,))
        _verify_zero_point(self, f"{self.RIGHT}_zero_point", right_type, self.columns())

    def columns(self) -> int:
        """How many zero points the right operand may have (one per output column/channel)."""
        raise NotImplementedError


class _IntegerMatmul(_IntegerProductOp):
    """numpy.matmul shapes of a and b; b's zero point one per column (its last axis)."""

    def columns(self) -> int:
        return shape_of(self.b)[-1]  # type: ignore[attr-defined]

    def result_shape(self) -> Shape:
        return matmul_shape(shape_of(self.a), shape_of(self.b))  # type: ignore[attr-defined]


@irdl_op_definition
class MatmulIntegerOp(_IntegerMatmul):
    """ONNX MatMulInteger (numpy.matmul shapes): (a - a_zero_point) @ (b - b_zero_point) in
    i32; a ui8/i8 with an optional rank-0 zero point operand, b ui8/i8 with an optional
    constant `b_zero_point` (a scalar or one per column)."""

    name = "nn.matmul_integer"
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    a_zero_point = opt_operand_def(TensorType)
    output = result_def(TensorType)
    b_zero_point = opt_prop_def(_DENSE)
    traits = traits_def(Pure())
    assembly_format = (
        "$a `,` $b (`zero_point` $a_zero_point^)? attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        a: Value,
        b: Value,
        a_zero_point: Value | None = None,
        b_zero_point: np.ndarray | None = None,
    ):
        super().__init__(
            operands=[a, b, [] if a_zero_point is None else [a_zero_point]],
            result_types=[TensorType(i32, matmul_shape(shape_of(a), shape_of(b)))],
            properties=zero_point_property(
                "b_zero_point", b_zero_point, tensor_type(b).element_type
            ),
        )

    def verify_element_types(self) -> None:
        self.verify_operands(self.a, self.b, self.a_zero_point)


@irdl_op_definition
class MatmulIntegerToFloatOp(_IntegerMatmul):
    """`nn.matmul_integer` with its result cast to f32, multiplied by `scale` and, where
    given, `bias` added, as dynamic quantization writes them (MatMulInteger -> Cast -> Mul
    -> Add; onnxruntime's MatMulIntegerToFloat): f32(sum (a - a_zero_point) *
    (b - b_zero_point)) * scale + bias, each step rounded as the ops it replaces; `scale` f32
    of rank 0 or one per column (a's scale times b's, computed at run time), `bias` f32, one
    per column. Made by `fuse-integer-scale`.

        %y = nn.matmul_integer_to_float %q, %w scale %s zero_point %z
            bias(%c : tensor<16xf32>)
            : (tensor<4x8xui8>, tensor<8x16xi8>, tensor<f32>, tensor<ui8>) -> tensor<4x16xf32>"""

    name = "nn.matmul_integer_to_float"
    RESULT_TYPE: ClassVar[Attribute] = f32
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    scale = operand_def(TensorType)
    a_zero_point = opt_operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    b_zero_point = opt_prop_def(_DENSE)
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = (
        "$a `,` $b `scale` $scale (`zero_point` $a_zero_point^)? "
        "(`bias` `(` $bias^ `:` type($bias) `)`)? attr-dict `:` `(` type($a) `,` type($b) `,` "
        "type($scale) (`,` type($a_zero_point)^)? `)` `->` type($output)"
    )

    def __init__(
        self,
        a: Value,
        b: Value,
        scale: Value,
        a_zero_point: Value | None = None,
        b_zero_point: np.ndarray | None = None,
        bias: Value | None = None,
    ):
        super().__init__(
            operands=[
                a,
                b,
                scale,
                [] if a_zero_point is None else [a_zero_point],
                [] if bias is None else [bias],
            ],
            result_types=[TensorType(f32, matmul_shape(shape_of(a), shape_of(b)))],
            properties=zero_point_property(
                "b_zero_point", b_zero_point, tensor_type(b).element_type
            ),
        )

    def verify_element_types(self) -> None:
        self.verify_operands(self.a, self.b, self.a_zero_point)
        checked_element_type(self, "the scale", self.scale, (f32,))
        per_column = ((self.columns(),),) if len(shape_of(self.b)) >= 2 else ()
        if shape_of(self.scale) not in ((), *per_column):
            allowed = f"a scalar or {self.columns()} values (one per column)"
            raise VerifyException(
                f"{self.name}: the scale must be {allowed if per_column else 'a scalar'} "
                f"(b of rank {len(shape_of(self.b))}), got shape {list(shape_of(self.scale))}"
            )
        if self.bias is not None:
            checked_element_type(self, "the bias", self.bias, (f32,))
            if not per_column:
                raise VerifyException(
                    f"{self.name}: a bias needs b of rank 2 or more (columns), got b of rank "
                    f"{len(shape_of(self.b))}"
                )
            if shape_of(self.bias) != (self.columns(),):
                raise VerifyException(
                    f"{self.name}: the bias must be {self.columns()} values (one per column), "
                    f"got shape {list(shape_of(self.bias))}"
                )


@irdl_op_definition
class ConvIntegerOp(ConvWindowOp, _IntegerProductOp):
    """ONNX ConvInteger as a 2-D convolution: (x - x_zero_point) convolved with (w -
    w_zero_point) in i32, the padding holding x's zero point; x ui8/i8 with an optional
    rank-0 zero point operand, w ui8/i8 (OIHW) with an optional constant `w_zero_point` (a
    scalar or one per output channel). Window attributes and shape rule as `nn.conv2d`."""

    name = "nn.conv_integer"
    LEFT: ClassVar[str] = "x"
    RIGHT: ClassVar[str] = "w"
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    x_zero_point = opt_operand_def(TensorType)
    output = result_def(TensorType)
    w_zero_point = opt_prop_def(_DENSE)
    traits = traits_def(Pure())
    assembly_format = (
        f"$x `,` $w (`zero_point` $x_zero_point^)? {CONV_WINDOW_SYNTAX} attr-dict "
        "`:` functional-type(operands, results)"
    )

    def __init__(
        self,
        x: Value,
        w: Value,
        x_zero_point: Value | None = None,
        w_zero_point: np.ndarray | None = None,
        *,
        strides: Sequence[int] = (1, 1),
        pads: Sequence[int] = (0, 0, 0, 0),
        dilations: Sequence[int] = (1, 1),
        groups: int = 1,
    ):
        shape = conv2d_shape(shape_of(x), shape_of(w), None, strides, pads, dilations, groups)
        super().__init__(
            operands=[x, w, [] if x_zero_point is None else [x_zero_point]],
            result_types=[TensorType(i32, shape)],
            properties={
                **self.window_properties(strides, pads, dilations, groups),
                **zero_point_property("w_zero_point", w_zero_point, tensor_type(w).element_type),
            },
        )

    def columns(self) -> int:
        return shape_of(self.w)[0]

    def result_shape(self) -> Shape:
        return self.window_shape(self.x, self.w, None)

    def verify_element_types(self) -> None:
        self.verify_operands(self.x, self.w, self.x_zero_point)
