"""Quantized ops: `nn.quantize`, `nn.dequantize` and the QOperator ops `nn.qconv2d`,
`nn.qmatmul`, `nn.qadd`, `nn.qmul`, `nn.qglobal_avg_pool`, `nn.qavg_pool2d`, `nn.qconcat`
(ONNX's QuantizeLinear, DequantizeLinear, QLinearConv, QLinearMatMul and com.microsoft's
QLinearAdd, QLinearMul, QLinearGlobalAveragePool, QLinearAveragePool, QLinearConcat),
`nn.qconv2d_add`, a `nn.qconv2d` with the `nn.qadd` after it (made by `fuse-post-ops`) or a
float residual add (made by `fold-qdq`), `nn.qconv2d_to_float`, a `nn.qconv2d` with a real
(f32) result, and `nn.qresize`, a linear resize (both `fold-qdq`'s).

A quantized value is a tensor of `ui8` or `i8` (`i32` for biases); real = (q - zero_point) *
scale. Scale and zero point are properties of the op that reads or writes the value, named as
ONNX names its inputs (`x_scale`, `x_zero_point`, `w_...`, `y_...`): an f32 dense attribute
holding a scalar (`dense<0.02> : tensor<f32>`, per tensor) or a 1-D array (per axis: the
output channels of a convolution's weight, the columns of a matmul's right operand, `axis` of
a quantize/dequantize), and a dense attribute of the value's element type holding as many zero
points. They print in the attribute dictionary:

    %q = nn.quantize %x {y_scale = dense<0.02> : tensor<f32>,
                         y_zero_point = dense<128> : tensor<ui8>}
        : tensor<1x8x4x4xf32> -> tensor<1x8x4x4xui8>
    %y = nn.qconv2d %q, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1
        {x_scale = ..., x_zero_point = ..., w_scale = dense<[...]> : tensor<16xf32>,
         w_zero_point = dense<0> : tensor<16xi8>, y_scale = ..., y_zero_point = ...}
        : (tensor<1x8x4x4xui8>, tensor<16x8x3x3xi8>, tensor<16xi32>) -> tensor<1x16x4x4xui8>

Semantics, exactly ONNX's: quantize is saturate(round_half_to_even(x / scale) + zero_point);
the q-ops accumulate (q - zero_point) products in i32 (a bias in i32 with scale x_scale *
w_scale and zero point 0), multiply by x_scale * w_scale / y_scale in f32 and quantize that
with y's zero point. A product's bias may also be f32 in those units, a real bias divided by
x_scale * w_scale (what `fold-qdq` makes of the float bias of torch's pt2e exports): the
same formula with a sum that need not be an integer. `clamp_min`/`clamp_max` (qconv2d,
qmatmul, qadd, qmul) bound the quantized output: a fused Relu is clamp_min = y_zero_point, a
fused Clip(lo, hi) clamps to [quantize(lo), quantize(hi)]; both are exact because
quantization is monotonic.

`QParams` reads and builds one value's parameters (`op.qparams("x")`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import (
    I64,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    TensorType,
    UnitAttr,
    f32,
    i32,
    i64,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects.nn.base import (
    QUANTIZED_TYPES,
    NNOp,
    Shape,
    Value,
    broadcast_shapes,
    integer_range,
    normalize_axis,
    shape_of,
    tensor_type,
    ui8,
)
from nnlayout.dialects.nn.base import numpy_dtype as base_numpy_dtype
from nnlayout.dialects.nn.elementwise import UnaryOp
from nnlayout.dialects.nn.fused import (
    ACTIVATION_SYNTAX,
    ActivationEpilogueOp,
    activation_properties,
    verify_activation,
)
from nnlayout.dialects.nn.linear import CONV_WINDOW_SYNTAX, ConvWindowOp
from nnlayout.dialects.nn.movement import RESIZE_ATTRIBUTES, ResizeBase
from nnlayout.dialects.nn.normalization import BatchNormBase
from nnlayout.dialects.nn.pooling import AvgPool2dOp, Pool2dOp
from nnlayout.dialects.nn.shape_rules import concat_shape, conv2d_shape, matmul_shape

_DENSE = DenseIntOrFPElementsAttr


def numpy_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype of a quantized (ui8, i8) or bias (i32) element type."""
    dtype = base_numpy_dtype(element_type)
    assert dtype is not None and dtype.kind in "iu", element_type
    return dtype


@dataclass(frozen=True, eq=False)
class QParams:
    """The quantization parameters of one value: `scale` (f32, shape () per tensor or (n,) per
    axis), `zero_point` (int64 values of `element_type`, the shape of `scale`) and, per axis,
    the `axis` they run along (None per tensor)."""

    scale: np.ndarray
    zero_point: np.ndarray
    element_type: Attribute
    axis: int | None = None

    @staticmethod
    def make(
        scale: float | Sequence[float] | np.ndarray,
        zero_point: int | Sequence[int] | np.ndarray,
        element_type: Attribute = ui8,
        axis: int | None = None,
    ) -> QParams:
        scales = np.asarray(scale, dtype=np.float32)
        zero_points = np.broadcast_to(np.asarray(zero_point, dtype=np.int64), scales.shape)
        return QParams(scales, zero_points.copy(), element_type, axis)

    @property
    def per_axis(self) -> bool:
        return self.scale.ndim == 1

    def same_as(self, other: QParams) -> bool:
        """The same parameters: equal scales, zero points, type and axis."""
        return (
            self.element_type == other.element_type
            and self.axis == other.axis
            and self.scale.shape == other.scale.shape
            and bool(np.array_equal(self.scale, other.scale))
            and bool(np.array_equal(self.zero_point, other.zero_point))
        )

    def properties(self, prefix: str) -> dict[str, Attribute]:
        """`{prefix}_scale` and `{prefix}_zero_point` as dense attributes."""
        shape = self.scale.shape
        return {
            f"{prefix}_scale": _DENSE.from_list(
                TensorType(f32, shape), [float(v) for v in self.scale.reshape(-1)]
            ),
            f"{prefix}_zero_point": _DENSE.from_list(
                TensorType(self.element_type, shape), [int(v) for v in self.zero_point.reshape(-1)]
            ),
        }


def _read_params(op: NNOp, prefix: str, axis: int | None = None) -> QParams:
    scale = op.properties[f"{prefix}_scale"]
    zero_point = op.properties[f"{prefix}_zero_point"]
    assert isinstance(scale, _DENSE) and isinstance(zero_point, _DENSE)
    shape = tuple(scale.type.get_shape())
    return QParams(
        np.asarray(scale.get_values(), dtype=np.float32).reshape(shape),
        np.asarray(zero_point.get_values(), dtype=np.int64).reshape(shape),
        zero_point.type.get_element_type(),
        axis if shape else None,
    )


def _verify_params(
    op: NNOp, prefix: str, element_type: Attribute, length: int | None = None
) -> None:
    """`{prefix}_scale` is an f32 scalar (or, with `length`, may be a 1-D array of `length`),
    positive and finite; `{prefix}_zero_point` has its shape and `element_type`."""
    name = op.name
    scale = op.properties.get(f"{prefix}_scale")
    zero_point = op.properties.get(f"{prefix}_zero_point")
    for what, attr in (("scale", scale), ("zero_point", zero_point)):
        if not isinstance(attr, _DENSE):
            raise VerifyException(f"{name}: needs {prefix}_{what} as a dense<...> attribute")
    assert isinstance(scale, _DENSE) and isinstance(zero_point, _DENSE)
    shape = tuple(scale.type.get_shape())
    allowed = "a scalar" if length is None else f"a scalar or {length} values"
    if scale.type.get_element_type() != f32 or shape not in ((), (length,) if length else ()):
        raise VerifyException(f"{name}: {prefix}_scale must be {allowed} of f32, got {scale.type}")
    values = np.asarray(scale.get_values(), dtype=np.float64)
    if not (np.all(np.isfinite(values)) and np.all(values > 0)):
        raise VerifyException(
            f"{name}: {prefix}_scale must be positive and finite, got {values.tolist()}"
        )
    zp_type = zero_point.type
    if zp_type.get_element_type() != element_type or tuple(zp_type.get_shape()) != shape:
        raise VerifyException(
            f"{name}: {prefix}_zero_point must have type {TensorType(element_type, shape)} "
            f"like {prefix}'s element type and {prefix}_scale's shape, got {zp_type}"
        )


def checked_element_type(
    op: NNOp, what: str, value: Value, allowed: Sequence[Attribute]
) -> Attribute:
    element_type = tensor_type(value).element_type
    if element_type not in allowed:
        names = " or ".join(str(t) for t in allowed)
        raise VerifyException(f"{op.name}: {what} must be {names}, got {element_type}")
    return element_type


def _product_types(
    op: NNOp, names: str, lhs: Value, rhs: Value, bias: Value | None
) -> tuple[Attribute, Attribute, Attribute]:
    """The element types of a quantized product's operands `lhs` and `rhs` (ui8 or i8, named
    by the two letters of `names`) and result (ui8 or i8), its optional bias checked to be
    i32 or f32 (in the accumulator's units either way): what nn.qconv2d, nn.qconv2d_add and
    nn.qmatmul check alike, in this order."""
    lhs_type = checked_element_type(op, names[0], lhs, QUANTIZED_TYPES)
    rhs_type = checked_element_type(op, names[1], rhs, QUANTIZED_TYPES)
    if bias is not None:
        checked_element_type(op, "the bias", bias, (i32, f32))
    result_type = checked_element_type(op, "the result", op.results[0], QUANTIZED_TYPES)
    return lhs_type, rhs_type, result_type


class RealActivationOp(ActivationEpilogueOp):
    """A q-op whose `activation` computes on real (f32) values of its result's shape: the
    real result of a product, a table's dequantized values."""

    def activation_type(self) -> Attribute:
        return TensorType(f32, shape_of(self.results[0]))

    def verify_real_activation(self) -> None:
        """`verify_activation`, and no `nnan`: the real values come from integers, never NaN,
        so the promise means nothing there."""
        verify_activation(self)
        if self.nnan is not None:
            raise VerifyException(
                f"{self.name}: 'nnan' does not apply: the real result is never NaN"
            )


def _verify_clamp(op: NNOp, element_type: Attribute) -> None:
    low, high = integer_range(element_type)
    bounds = []
    for what in ("clamp_min", "clamp_max"):
        attr = op.properties.get(what)
        if isinstance(attr, IntegerAttr):
            value = attr.value.data
            if not low <= value <= high:
                raise VerifyException(
                    f"{op.name}: {what} {value} is outside {element_type}'s range {low}..{high}"
                )
            bounds.append(value)
    if len(bounds) == 2 and bounds[0] > bounds[1]:
        raise VerifyException(f"{op.name}: clamp_min {bounds[0]} > clamp_max {bounds[1]}")


def _clamp_properties(clamp: tuple[int | None, int | None]) -> dict[str, Attribute]:
    return {
        name: IntegerAttr(value, i64)
        for name, value in zip(("clamp_min", "clamp_max"), clamp, strict=True)
        if value is not None
    }


class QuantizedOp(NNOp):
    """A quantized op: operands and results of the types its `verify_element_types` names
    (they differ: f32 in and ui8 out, i8 weights and i32 bias), its parameters as properties."""

    irdl_options = (ParsePropInAttrDict(),)

    def qparams(self, prefix: str) -> QParams:
        """The parameters of the value ONNX names `prefix` ("x", "w", "y", "a", "b")."""
        return _read_params(self, prefix)


@functools.cache
def with_qparams(*prefixes: str) -> type[QuantizedOp]:
    """A base of quantized ops declaring, once for all of them, the properties of the values
    `prefixes` names: `{prefix}_scale` and `{prefix}_zero_point` (dense attributes)."""
    fields = {
        f"{prefix}_{what}": prop_def(_DENSE)
        for prefix in prefixes
        for what in ("scale", "zero_point")
    }
    name = "QuantizedOpWith" + "".join(prefix.upper() for prefix in prefixes)
    return type(name, (QuantizedOp,), {"__doc__": with_qparams.__doc__, **fields})


def _params_properties(prefixes: str, params: Sequence[QParams]) -> dict[str, Attribute]:
    """The properties of `params`, the parameters of the values `prefixes` names in order."""
    return {
        key: value
        for prefix, qparams in zip(prefixes, params, strict=True)
        for key, value in qparams.properties(prefix).items()
    }


class ClampedOp(QuantizedOp):
    """A quantized op whose result may be clamped to [clamp_min, clamp_max] (a fused Relu or
    Clip)."""

    clamp_min = opt_prop_def(IntegerAttr[I64])
    clamp_max = opt_prop_def(IntegerAttr[I64])

    @property
    def clamp(self) -> tuple[int | None, int | None]:
        """(clamp_min, clamp_max), None where that side is unbounded."""
        return tuple(  # type: ignore[return-value]
            None if attr is None else attr.value.data for attr in (self.clamp_min, self.clamp_max)
        )

    def clamp_limits(self, element_type: Attribute) -> tuple[int, int]:
        """The clamp with an unbounded side at `element_type`'s own limit."""
        limits = integer_range(element_type)
        return tuple(  # type: ignore[return-value]
            limit if v is None else v for v, limit in zip(self.clamp, limits, strict=True)
        )

    def set_clamp(self, clamp: tuple[int | None, int | None]) -> None:
        for name in ("clamp_min", "clamp_max"):
            self.properties.pop(name, None)
        self.properties.update(_clamp_properties(clamp))


# ------------------------------------------------------------------ quantize / dequantize
def _axis_length(op: NNOp, value: Value, axis: IntegerAttr | None, scale_key: str) -> int | None:
    """The length a per-axis scale must have (the axis's size), None without `axis`."""
    scale = op.properties.get(scale_key)
    per_axis = isinstance(scale, _DENSE) and len(scale.type.get_shape()) == 1
    if axis is None:
        if per_axis:
            raise VerifyException(f"{op.name}: a 1-D {scale_key} needs an axis")
        return None
    if not per_axis:
        raise VerifyException(f"{op.name}: axis is given but {scale_key} is a scalar")
    shape = shape_of(value)
    return shape[normalize_axis(op.name, axis.value.data, len(shape))]


def _axis_properties(axis: int | None) -> dict[str, Attribute]:
    return {} if axis is None else {"axis": IntegerAttr(axis, i64)}


@irdl_op_definition
class QuantizeOp(with_qparams("y")):
    """f32 -> ui8/i8 (ONNX QuantizeLinear): saturate(round_half_to_even(x / y_scale) +
    y_zero_point), per tensor or, with `axis`, per slice along `axis`."""

    name = "nn.quantize"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr[I64])
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: Value, params: QParams):
        super().__init__(
            operands=[input],
            result_types=[TensorType(params.element_type, shape_of(input))],
            properties={**params.properties("y"), **_axis_properties(params.axis)},
        )

    def result_shape(self) -> Shape:
        return shape_of(self.input)

    def qparams(self, prefix: str = "y") -> QParams:
        axis = None if self.axis is None else self.axis.value.data
        return _read_params(self, prefix, axis)

    def verify_element_types(self) -> None:
        checked_element_type(self, "the input", self.input, (f32,))
        element_type = checked_element_type(self, "the result", self.output, QUANTIZED_TYPES)
        length = _axis_length(self, self.input, self.axis, "y_scale")
        _verify_params(self, "y", element_type, length)


@irdl_op_definition
class DequantizeOp(with_qparams("x")):
    """ui8/i8/i32 -> f32 (ONNX DequantizeLinear): (x - x_zero_point) * x_scale, per tensor or,
    with `axis`, per slice along `axis`. An i32 input has zero point 0."""

    name = "nn.dequantize"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr[I64])
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: Value, params: QParams):
        super().__init__(
            operands=[input],
            result_types=[TensorType(f32, shape_of(input))],
            properties={**params.properties("x"), **_axis_properties(params.axis)},
        )

    def result_shape(self) -> Shape:
        return shape_of(self.input)

    def qparams(self, prefix: str = "x") -> QParams:
        axis = None if self.axis is None else self.axis.value.data
        return _read_params(self, prefix, axis)

    def verify_element_types(self) -> None:
        element_type = checked_element_type(self, "the input", self.input, (*QUANTIZED_TYPES, i32))
        checked_element_type(self, "the result", self.output, (f32,))
        length = _axis_length(self, self.input, self.axis, "x_scale")
        _verify_params(self, "x", element_type, length)
        if element_type == i32 and np.any(self.qparams().zero_point != 0):
            raise VerifyException("nn.dequantize: an i32 input has zero point 0 (ONNX)")


# ------------------------------------------------------------------------ convolution
@irdl_op_definition
class QConv2dOp(ConvWindowOp, with_qparams("x", "w", "y"), ClampedOp, RealActivationOp):
    """Quantized 2-D convolution (ONNX QLinearConv): x ui8/i8, w i8/ui8 (OIHW), optional bias
    i32 [O] (scale x_scale * w_scale, zero point 0); x and y per tensor, w per tensor or per
    output channel (w_scale of O values). strides/pads/dilations/groups as `nn.conv2d`, whose
    shape rule it uses. The result has y_zero_point's type, clamped to [clamp_min, clamp_max]
    when given (a fused Relu or Clip).

    With `activation` (one of `ACTIVATIONS` and its attributes, as on `nn.fused_conv2d`) the
    real result is not requantized by its multiplier but goes through the activation first:
    y = clamp(quantize_y(activation(r))), r = (sum + bias) * x_scale * w_scale rounded to f32,
    the activation computed in f32 as its float op. This is what `fold-qdq` makes of
    dequantize -> Conv -> SiLU/HardSwish/GELU/... -> quantize, where torch's x86 quantizer
    leaves the convolution's result unquantized before its activation (EfficientNet,
    MobileNetV3): one kernel, no f32 tensor in memory.

        %y = nn.qconv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1]
               groups 1 activation "swish" {x_scale = ..., ...} : (...) -> tensor<...xui8>"""

    name = "nn.qconv2d"
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        f"$x `,` $w (`,` $bias^)? {CONV_WINDOW_SYNTAX} {ACTIVATION_SYNTAX} attr-dict "
        "`:` functional-type(operands, results)"
    )

    def __init__(
        self,
        x: Value,
        w: Value,
        bias: Value | None,
        params: tuple[QParams, QParams, QParams],
        *,
        strides: Sequence[int] = (1, 1),
        pads: Sequence[int] = (0, 0, 0, 0),
        dilations: Sequence[int] = (1, 1),
        groups: int = 1,
        clamp: tuple[int | None, int | None] = (None, None),
        activation: UnaryOp | None = None,
    ):
        shape = conv2d_shape(
            shape_of(x),
            shape_of(w),
            None if bias is None else shape_of(bias),
            strides,
            pads,
            dilations,
            groups,
        )
        super().__init__(
            operands=[x, w, [] if bias is None else [bias]],
            result_types=[TensorType(params[2].element_type, shape)],
            properties={
                **self.window_properties(strides, pads, dilations, groups),
                **_params_properties("xwy", params),
                **_clamp_properties(clamp),
                **activation_properties(activation, nnan=False),
            },
        )

    def qparams(self, prefix: str) -> QParams:
        return _read_params(self, prefix, 0 if prefix == "w" else None)

    def result_shape(self) -> Shape:
        return self.window_shape(self.x, self.w, self.bias)

    def verify_element_types(self) -> None:
        x_type, w_type, y_type = _product_types(self, "xw", self.x, self.w, self.bias)
        _verify_params(self, "x", x_type)
        _verify_params(self, "w", w_type, shape_of(self.w)[0])
        _verify_params(self, "y", y_type)
        _verify_clamp(self, y_type)
        self.verify_real_activation()


@irdl_op_definition
class QConv2dToFloatOp(ConvWindowOp, with_qparams("x", "w"), RealActivationOp):
    """A quantized convolution whose result is its real value in f32, not requantized: what
    `fold-qdq` makes of dequantize -> Conv whose result goes on in float (torch's x86
    quantizer quantizes a convolution's inputs only, where a SiLU, a hardswish or a
    LayerNorm follows). (sum of (x - x_zp) * (w - w_zp) + bias) * x_scale * w_scale[o], in
    f64, rounded to f32 once, then `activation` (as `nn.fused_conv2d`'s) where given: the
    activation whose float result is read elsewhere too (EfficientNet's SiLU, which its SE
    gate multiplies in float); operands (the bias i32 or f32, in the accumulator's units),
    parameters and window as `nn.qconv2d`'s.

        %y = nn.qconv2d_to_float %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1]
               groups 1 activation "swish" {x_scale = ..., x_zero_point = ..., w_scale = ...,
               w_zero_point = ...} : (tensor<1x8x4x4xui8>, tensor<16x8x3x3xi8>,
               tensor<16xf32>) -> tensor<1x16x4x4xf32>"""

    name = "nn.qconv2d_to_float"
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = QConv2dOp.assembly_format

    def __init__(self, conv: QConv2dOp, activation: UnaryOp | None = None):
        """`conv`'s convolution (its y parameters and clamp unused), with a real result,
        then `activation`."""
        properties = {
            name: conv.properties[name] for name in ("strides", "pads", "dilations", "groups")
        }
        properties.update(_params_properties("xw", [conv.qparams(p) for p in "xw"]))
        properties.update(activation_properties(activation, nnan=False))
        super().__init__(
            operands=[conv.x, conv.w, [] if conv.bias is None else [conv.bias]],
            result_types=[TensorType(f32, shape_of(conv.output))],
            properties=properties,
        )

    def qparams(self, prefix: str) -> QParams:
        return _read_params(self, prefix, 0 if prefix == "w" else None)

    def result_shape(self) -> Shape:
        return self.window_shape(self.x, self.w, self.bias)

    def verify_element_types(self) -> None:
        x_type = checked_element_type(self, "x", self.x, QUANTIZED_TYPES)
        w_type = checked_element_type(self, "w", self.w, QUANTIZED_TYPES)
        if self.bias is not None:
            checked_element_type(self, "the bias", self.bias, (i32, f32))
        checked_element_type(self, "the result", self.output, (f32,))
        _verify_params(self, "x", x_type)
        _verify_params(self, "w", w_type, shape_of(self.w)[0])
        self.verify_real_activation()


@irdl_op_definition
class QConv2dAddOp(ConvWindowOp, with_qparams("x", "w", "r", "y"), ClampedOp):
    """A quantized convolution and a residual add, in one op where a kernel runs both in one
    pass (oneDNN's int8 convolution with a `sum` post-op, writing over the addend's buffer):

        %y = nn.qconv2d_add %x, %w, %b add %r strides [1, 1] pads [0, 0, 0, 0]
               dilations [1, 1] groups 1 {x_scale = ..., x_zero_point = ..., w_scale = ...,
               w_zero_point = ..., c_scale = ..., c_zero_point = ..., r_scale = ...,
               r_zero_point = ..., y_scale = ..., y_zero_point = ...} : (...) -> tensor<...>

    With `c` (made by `fuse-post-ops` from a qconv2d and the qadd after it) it means exactly
    the unfused sequence

        %c = nn.qconv2d %x, %w, %b ... {x_*, w_*, y_* = c's, clamp_min, clamp_max}
        %y = nn.qadd %c, %r {a_* = c's, b_* = r's, y_*}

    `c` naming the convolution's quantized result (as `nn.qconv2d`'s `y`, clamped to
    [clamp_min, clamp_max] when given). Without `c` (made by `fold-qdq` from torch's x86
    exports: q(relu(conv(dq(x), dq(w)) + dq(r)))) the convolution's result is not rounded:
    y = clamp(quantize_y(conv + dequantize_r(r))), one rounding, the clamp bounding y.
    `r` names the addend, `y` the result (per tensor); `r` and the result have one type and
    the result's shape. Operands and attributes otherwise as `nn.qconv2d`'s."""

    name = "nn.qconv2d_add"
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    addend = operand_def(TensorType)
    output = result_def(TensorType)
    c_scale = opt_prop_def(_DENSE)
    c_zero_point = opt_prop_def(_DENSE)
    traits = traits_def(Pure())
    assembly_format = (
        f"$x `,` $w (`,` $bias^)? `add` $addend {CONV_WINDOW_SYNTAX} attr-dict "
        "`:` functional-type(operands, results)"
    )

    def __init__(self, conv: QConv2dOp, addend: Value, r: QParams, y: QParams | None = None):
        """`conv` followed by a qadd of its result (with `conv`'s parameters, c's) and
        `addend` (parameters `r`) into `y`; without `y`, `conv`'s unrounded result plus the
        dequantized addend, quantized once with `conv`'s y parameters and clamp."""
        properties = {
            name: conv.properties[name]
            for name in ("strides", "pads", "dilations", "groups", "clamp_min", "clamp_max")
            if name in conv.properties
        }
        if y is None:
            y = conv.qparams("y")
            properties.update(_params_properties("xw", [conv.qparams(p) for p in "xw"]))
        else:
            properties.update(_params_properties("xwc", [conv.qparams(p) for p in "xwy"]))
        properties.update(_params_properties("ry", (r, y)))
        super().__init__(
            operands=[conv.x, conv.w, [] if conv.bias is None else [conv.bias], addend],
            result_types=[TensorType(y.element_type, shape_of(conv.output))],
            properties=properties,
        )

    @property
    def rounds_once(self) -> bool:
        """No `c`: the convolution's result is added unrounded, and the clamp bounds y."""
        return self.c_scale is None

    @property
    def addend_index(self) -> int:
        """The addend's operand index (the buffer the fused kernel may write over)."""
        return 2 if self.bias is None else 3

    def qparams(self, prefix: str) -> QParams:
        return _read_params(self, prefix, 0 if prefix == "w" else None)

    def result_shape(self) -> Shape:
        shape = self.window_shape(self.x, self.w, self.bias)
        if shape_of(self.addend) != shape:
            raise VerifyException(
                f"{self.name}: addend shape {list(shape_of(self.addend))} is not the result "
                f"shape {list(shape)}"
            )
        return shape

    def verify_element_types(self) -> None:
        x_type, w_type, y_type = _product_types(self, "xw", self.x, self.w, self.bias)
        checked_element_type(self, "the addend", self.addend, (y_type,))
        _verify_params(self, "x", x_type)
        _verify_params(self, "w", w_type, shape_of(self.w)[0])
        _verify_params(self, "r", y_type)
        _verify_params(self, "y", y_type)
        if (self.c_scale is None) != (self.c_zero_point is None):
            raise VerifyException(
                f"{self.name}: c_scale and c_zero_point come together (both, or neither: "
                "one rounding)"
            )
        if self.rounds_once:
            _verify_clamp(self, y_type)
            return
        c_type = self.c_zero_point.type.get_element_type()  # type: ignore[union-attr]
        if c_type not in QUANTIZED_TYPES:
            raise VerifyException(f"{self.name}: c_zero_point must be ui8 or i8, got {c_type}")
        _verify_params(self, "c", c_type)
        _verify_clamp(self, c_type)


# ---------------------------------------------------------------------------- matmul
@irdl_op_definition
class QMatmulOp(with_qparams("a", "b", "y"), ClampedOp, RealActivationOp):
    """Quantized matrix product (ONNX QLinearMatMul, numpy.matmul shapes): a ui8/i8 per tensor,
    b i8/ui8 per tensor or per column (b_scale of N values, N = b's last dimension), an
    optional i32 bias [N] added to the i32 accumulator (scale a_scale * b_scale, zero point 0:
    what a quantized Gemm's C becomes), the result of y_zero_point's type, clamped to
    [clamp_min, clamp_max] when given. With `activation` (as `nn.qconv2d`'s) the real result
    (sum + bias) * a_scale * b_scale, rounded to f32, goes through the activation before the
    quantization: fold-qdq's Linear -> GELU -> quantize of torch's x86 exports (a
    transformer's MLP)."""

    name = "nn.qmatmul"
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        f"$a `,` $b (`,` $bias^)? {ACTIVATION_SYNTAX} attr-dict "
        "`:` functional-type(operands, results)"
    )

    def __init__(
        self,
        a: Value,
        b: Value,
        bias: Value | None,
        params: tuple[QParams, QParams, QParams],
        *,
        clamp: tuple[int | None, int | None] = (None, None),
        activation: UnaryOp | None = None,
    ):
        super().__init__(
            operands=[a, b, [] if bias is None else [bias]],
            result_types=[
                TensorType(params[2].element_type, matmul_shape(shape_of(a), shape_of(b)))
            ],
            properties={
                **_params_properties("aby", params),
                **_clamp_properties(clamp),
                **activation_properties(activation, nnan=False),
            },
        )

    def qparams(self, prefix: str) -> QParams:
        return _read_params(self, prefix, len(shape_of(self.b)) - 1 if prefix == "b" else None)

    def result_shape(self) -> Shape:
        shape = matmul_shape(shape_of(self.a), shape_of(self.b))
        if self.bias is not None and shape_of(self.bias) != (shape_of(self.b)[-1],):
            raise VerifyException(
                f"nn.qmatmul: bias must have shape [{shape_of(self.b)[-1]}] (b's columns), "
                f"got {list(shape_of(self.bias))}"
            )
        return shape

    def verify_element_types(self) -> None:
        a_type, b_type, y_type = _product_types(self, "ab", self.a, self.b, self.bias)
        columns = shape_of(self.b)[-1] if len(shape_of(self.b)) >= 2 else None
        _verify_params(self, "a", a_type)
        _verify_params(self, "b", b_type, columns)
        _verify_params(self, "y", y_type)
        _verify_clamp(self, y_type)
        self.verify_real_activation()


# -------------------------------------------------------------------- element-wise ops
class QBinaryOp(with_qparams("a", "b", "y"), ClampedOp):
    """A quantized element-wise op with numpy broadcasting: a, b and the result of one type
    (ui8 or i8), each with its own per-tensor scale and zero point (com.microsoft's QLinear*),
    the result clamped to [clamp_min, clamp_max] where given (a Relu or Clip after the op,
    folded as for qconv2d: torch's quantized exports write a residual add's Relu there)."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        lhs: Value,
        rhs: Value,
        params: tuple[QParams, QParams, QParams],
        clamp: tuple[int | None, int | None] = (None, None),
    ):
        shape = broadcast_shapes(self.name, shape_of(lhs), shape_of(rhs))
        super().__init__(
            operands=[lhs, rhs],
            result_types=[TensorType(params[2].element_type, shape)],
            properties={**_params_properties("aby", params), **_clamp_properties(clamp)},
        )

    def result_shape(self) -> Shape:
        return broadcast_shapes(self.name, shape_of(self.lhs), shape_of(self.rhs))

    def verify_element_types(self) -> None:
        element_type = checked_element_type(self, "lhs", self.lhs, QUANTIZED_TYPES)
        for what, value in (("rhs", self.rhs), ("the result", self.output)):
            checked_element_type(self, what, value, (element_type,))
        for prefix in ("a", "b", "y"):
            _verify_params(self, prefix, element_type)
        _verify_clamp(self, element_type)


@irdl_op_definition
class QAddOp(QBinaryOp):
    """Quantized a + b (com.microsoft QLinearAdd): quantize(dequantize(a) + dequantize(b))."""

    name = "nn.qadd"


@irdl_op_definition
class QMulOp(QBinaryOp):
    """Quantized a * b (com.microsoft QLinearMul): quantize(dequantize(a) * dequantize(b))."""

    name = "nn.qmul"


def _verify_one_type(op: NNOp) -> Attribute:
    """An input and a result of one 8-bit type (returned), x's and y's parameters of it: what
    the quantized ops of one input check alike (qglobal_avg_pool, qavg_pool2d, qlookup)."""
    element_type = checked_element_type(op, "the input", op.operands[0], QUANTIZED_TYPES)
    checked_element_type(op, "the result", op.results[0], (element_type,))
    _verify_params(op, "x", element_type)
    _verify_params(op, "y", element_type)
    return element_type


# ---------------------------------------------------------------------- normalization
@irdl_op_definition
class QBatchNormOp(with_qparams("x", "y"), BatchNormBase):
    """Inference batch norm of x's dequantized values over axis 1, quantized with y's
    parameters: quantize(batch_norm(dequantize(x))), each step rounded as the three ops are
    (made by `fold-qdq`: a pre-activation network's dequantize -> batch norm -> quantize,
    DenseNet's). Operands as `nn.batch_norm`'s: x (u8/s8, per-tensor parameters), then the
    f32 scale, bias, mean and var, one per channel.

        %y = nn.qbatch_norm %xq, %g, %b, %m, %v epsilon 1.0e-05 {x_scale = dense<0.02>
            : tensor<f32>, x_zero_point = dense<3> : tensor<ui8>, y_scale = ...}
            : (tensor<1x64x56x56xui8>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>,
               tensor<64xf32>) -> tensor<1x64x56x56xui8>"""

    name = "nn.qbatch_norm"

    def __init__(
        self,
        input: Value,
        vectors: Sequence[Value],
        params: tuple[QParams, QParams],
        epsilon: float = 1e-5,
    ):
        """`vectors`: scale, bias, mean and var, as `nn.batch_norm`'s."""
        super().__init__(
            operands=[input, *vectors],
            result_types=[TensorType(params[1].element_type, shape_of(input))],
            properties={"epsilon": FloatAttr(epsilon, f32), **_params_properties("xy", params)},
        )
        self.verify_()  # like nn.batch_norm's builder, reject what the verifier would

    def verify_element_types(self) -> None:
        for prefix, value in (("x", self.input), ("y", self.output)):
            what = "the input" if prefix == "x" else "the result"
            element_type = checked_element_type(self, what, value, QUANTIZED_TYPES)
            _verify_params(self, prefix, element_type)
        for name in ("scale", "bias", "mean", "var"):
            checked_element_type(self, f"the {name}", getattr(self, name), (f32,))


# --------------------------------------------------------------------- pooling, concat
@irdl_op_definition
class QGlobalAvgPoolOp(with_qparams("x", "y")):
    """Quantized mean over the spatial axes (com.microsoft QLinearGlobalAveragePool, NCHW):
    [N, C, ...] -> [N, C, 1, ...], x and y of one type, each with its own parameters."""

    name = "nn.qglobal_avg_pool"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: Value, params: tuple[QParams, QParams]):
        shape = self._shape(shape_of(input))
        super().__init__(
            operands=[input],
            result_types=[TensorType(params[1].element_type, shape)],
            properties=_params_properties("xy", params),
        )

    @staticmethod
    def _shape(x: Shape) -> Shape:
        if len(x) < 3:
            raise VerifyException(
                f"nn.qglobal_avg_pool: input must have rank >= 3 (N, C, spatial...), got {list(x)}"
            )
        return x[:2] + (1,) * (len(x) - 2)

    def result_shape(self) -> Shape:
        return self._shape(shape_of(self.input))

    def verify_element_types(self) -> None:
        _verify_one_type(self)


@irdl_op_definition
class QAvgPool2dOp(with_qparams("x", "y"), Pool2dOp):
    """Quantized average pooling (com.microsoft QLinearAveragePool, NCHW): `nn.avg_pool2d`'s
    window, pads, ceil_mode and count_include_pad, on x's dequantized values, quantized with
    y's parameters; x and y of one type. A padded position is a real 0, i.e. it holds x's
    zero point, not the integer 0 (with count_include_pad it counts in the divisor)."""

    name = "nn.qavg_pool2d"
    count_include_pad = opt_prop_def(UnitAttr)
    assembly_format = AvgPool2dOp.assembly_format

    def __init__(
        self,
        input: Value,
        params: tuple[QParams, QParams],
        *,
        count_include_pad: bool = False,
        **window: Sequence[int] | bool,
    ):
        """`window`: kernel, strides, pads, dilations and ceil_mode, as `nn.avg_pool2d`'s."""
        extra: dict[str, Attribute] = dict(_params_properties("xy", params))
        if count_include_pad:
            extra["count_include_pad"] = UnitAttr()
        super().__init__(input, extra=extra, **window)  # type: ignore[arg-type]

    def verify_element_types(self) -> None:
        _verify_one_type(self)


@irdl_op_definition
class QResizeOp(with_qparams("x", "y"), ResizeBase):
    """A linear resize of quantized data (onnxruntime's QDQ Resize: dequantize -> linear
    Resize -> quantize, a segmentation head's upsampling): `nn.resize`'s interpolation of
    x's dequantized values, quantized once with y's parameters; x and y of one type, per
    tensor. (A nearest resize needs no q-op: `nn.resize` moves integers exactly.)

        %y = nn.qresize %x mode "linear" coordinates "half_pixel" nearest "floor"
               scales [8.0, 8.0] {x_scale = ..., x_zero_point = ..., y_scale = ...,
               y_zero_point = ...} : tensor<1x21x28x28xui8> -> tensor<1x21x224x224xui8>"""

    name = "nn.qresize"

    def __init__(self, input: Value, resize: ResizeBase, params: tuple[QParams, QParams]):
        """`resize`'s result shape and attributes, on `input` (its integers)."""
        super().__init__(
            operands=[input],
            result_types=[TensorType(params[1].element_type, shape_of(resize.output))],
            properties={
                **{name: resize.properties[name] for name in RESIZE_ATTRIBUTES},
                **_params_properties("xy", params),
            },
        )

    def result_shape(self) -> Shape:
        if self.mode.data != "linear":
            raise VerifyException(
                f"{self.name}: mode must be linear, got {self.mode.data} (a nearest resize of "
                "quantized data is nn.resize)"
            )
        return self.checked_resize_shape()

    def verify_element_types(self) -> None:
        _verify_one_type(self)


@irdl_op_definition
class QLookupOp(with_qparams("x", "y"), RealActivationOp):
    """A unary function of 8-bit data as a table: `table` holds y for each x in the type's
    order (x = -128 .. 127 for i8, 0 .. 255 for ui8), so y = table[x - min]. `fold-qdq`
    makes it of dequantize -> an element-wise float function -> quantize (hardswish, swish,
    sigmoid, ...: each of the 256 inputs computed once at compile time, exactly what the
    float ops give it); x's and y's parameters say what the integers mean (a padding lane
    of y holds y's zero point). x and y of one type.

    The table is the semantics. `activation` (and its attributes, as on `nn.fused_conv2d`),
    where the function is one of `ACTIVATIONS`, says what the table was computed from: a
    kernel may compute that function instead where it gives the table's every entry.

        %y = nn.qlookup %x {table = dense<[...]> : tensor<256xui8>, x_scale = ...,
               x_zero_point = ..., y_scale = ..., y_zero_point = ...,
               activation = "hardswish"} : tensor<1x16x8x8xui8> -> tensor<1x16x8x8xui8>"""

    name = "nn.qlookup"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    table = prop_def(_DENSE)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(
        self,
        input: Value,
        table: Sequence[int],
        params: tuple[QParams, QParams],
        function: UnaryOp | None = None,
    ):
        """The table of `function` (a float op of `ACTIVATIONS`, recorded as `activation`
        and its attributes) or of a function not recorded (None)."""
        element_type = params[1].element_type
        super().__init__(
            operands=[input],
            result_types=[TensorType(element_type, shape_of(input))],
            properties={
                **_params_properties("xy", params),
                "table": _DENSE.from_list(TensorType(element_type, (256,)), list(table)),
                **activation_properties(function, nnan=False),
            },
        )

    def result_shape(self) -> Shape:
        return shape_of(self.input)

    def verify_element_types(self) -> None:
        element_type = _verify_one_type(self)
        table_type = self.table.type
        if tuple(table_type.get_shape()) != (256,) or table_type.element_type != element_type:
            raise VerifyException(
                f"{self.name}: table must be a tensor<256x{element_type}>, got {table_type}"
            )
        self.verify_real_activation()

    def values(self) -> np.ndarray:
        """The table as an array of the data's numpy type."""
        dtype = base_numpy_dtype(self.output.type.element_type)  # type: ignore[attr-defined]
        return np.asarray(self.table.get_values(), dtype=np.int64).astype(dtype)


@irdl_op_definition
class QConcatOp(with_qparams("x", "y")):
    """Quantized concatenation (com.microsoft QLinearConcat): each input requantized from its
    own parameters (x_scale and x_zero_point hold one value per input) to y's, joined along
    `axis`; inputs and result of one type."""

    name = "nn.qconcat"
    inputs = var_operand_def(TensorType)
    output = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure())
    assembly_format = "$inputs `axis` $axis attr-dict `:` functional-type($inputs, $output)"

    def __init__(self, inputs: Sequence[Value], axis: int, params: tuple[QParams, QParams]):
        shape = concat_shape([shape_of(v) for v in inputs], axis)
        super().__init__(
            operands=[list(inputs)],
            result_types=[TensorType(params[1].element_type, shape)],
            properties={"axis": IntegerAttr(axis, i64), **_params_properties("xy", params)},
        )

    @property
    def normalized_axis(self) -> int:
        return normalize_axis(self.name, self.axis.value.data, len(shape_of(self.output)))

    def input_qparams(self) -> list[QParams]:
        """Input i's own per-tensor parameters."""
        x = self.qparams("x")
        return [
            QParams.make(x.scale[i], x.zero_point[i], x.element_type)
            for i in range(len(self.inputs))
        ]

    def result_shape(self) -> Shape:
        return concat_shape([shape_of(v) for v in self.inputs], self.axis.value.data)

    def verify_element_types(self) -> None:
        element_type = checked_element_type(self, "input 0", self.inputs[0], QUANTIZED_TYPES)
        for index, value in enumerate(self.inputs):
            checked_element_type(self, f"input {index}", value, (element_type,))
        checked_element_type(self, "the result", self.output, (element_type,))
        count = len(self.inputs)
        scale = self.properties.get("x_scale")
        if isinstance(scale, _DENSE) and tuple(scale.type.get_shape()) != (count,):
            raise VerifyException(
                f"nn.qconcat: x_scale must hold one f32 per input ({count}), got {scale.type}"
            )
        _verify_params(self, "x", element_type, count)
        _verify_params(self, "y", element_type)
