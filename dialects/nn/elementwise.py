"""Element-wise ops: the unary activations and arithmetic, the broadcasting binary ops, and
`nn.sum` (`activations.py` has the newer activations; `fused.py` names those a fused
convolution may end with)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    Float32Type,
    FloatAttr,
    TensorType,
    f32,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects.nn.base import NNOp, Shape, Value, broadcast_shapes, shape_of, with_shape


class UnaryOp(NNOp):
    """An element-wise op whose result has its input's type."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    output = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input)"

    def __init__(self, input: Value, properties: dict[str, Attribute] | None = None):
        super().__init__(
            operands=[input], result_types=[SSAValue.get(input).type], properties=properties or {}
        )

    def result_shape(self) -> Shape:
        return shape_of(self.input)


@irdl_op_definition
class ReluOp(UnaryOp):
    """max(x, 0), NaN stays NaN (ONNX Relu)."""

    name = "nn.relu"


@irdl_op_definition
class SigmoidOp(UnaryOp):
    """1 / (1 + exp(-x)) (ONNX Sigmoid)."""

    name = "nn.sigmoid"


@irdl_op_definition
class TanhOp(UnaryOp):
    """tanh(x) (ONNX Tanh)."""

    name = "nn.tanh"


@irdl_op_definition
class ExpOp(UnaryOp):
    """exp(x) (ONNX Exp)."""

    name = "nn.exp"


@irdl_op_definition
class NegOp(UnaryOp):
    """-x (ONNX Neg)."""

    name = "nn.neg"


@irdl_op_definition
class AbsOp(UnaryOp):
    """|x| (ONNX Abs)."""

    name = "nn.abs"


@irdl_op_definition
class SqrtOp(UnaryOp):
    """sqrt(x), NaN below 0 (ONNX Sqrt)."""

    name = "nn.sqrt"


@irdl_op_definition
class LeakyReluOp(UnaryOp):
    """x if x >= 0 else alpha * x."""

    name = "nn.leaky_relu"
    alpha = prop_def(FloatAttr[Float32Type])
    assembly_format = "$input `alpha` $alpha attr-dict `:` type($input)"

    def __init__(self, input: Value, alpha: float = 0.01):
        super().__init__(input, {"alpha": FloatAttr(alpha, f32)})


@irdl_op_definition
class ClipOp(UnaryOp):
    """min(max(x, min), max); a missing bound is unbounded."""

    name = "nn.clip"
    min = opt_prop_def(FloatAttr[Float32Type])
    max = opt_prop_def(FloatAttr[Float32Type])
    assembly_format = "$input (`min` $min^)? (`max` $max^)? attr-dict `:` type($input)"

    def __init__(self, input: Value, min: float | None = None, max: float | None = None):
        properties: dict[str, Attribute] = {}
        if min is not None:
            properties["min"] = FloatAttr(min, f32)
        if max is not None:
            properties["max"] = FloatAttr(max, f32)
        super().__init__(input, properties)
        self.verify_()  # like the other builders, reject what the verifier would

    def verify_(self) -> None:
        super().verify_()
        verify_clip_bounds(self.name, self.min, self.max)


def verify_clip_bounds(op_name: str, low: FloatAttr | None, high: FloatAttr | None) -> None:
    """A clip's bounds (nn.clip's, a fused clip's) are numbers, min not above max. A NaN
    bound has no clamp semantics: numpy's clip gives NaN everywhere, oneDNN's refuses it."""
    for what, bound in (("min", low), ("max", high)):
        if bound is not None and math.isnan(bound.value.data):
            raise VerifyException(
                f"{op_name}: {what} is NaN; a bound must be a number (leave it out for none)"
            )
    if low is not None and high is not None and low.value.data > high.value.data:
        raise VerifyException(
            f"{op_name}: min {low.value.data} is greater than max {high.value.data}"
        )


class BinaryOp(NNOp):
    """An element-wise op with numpy broadcasting."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: Value, rhs: Value):
        shape = broadcast_shapes(self.name, shape_of(lhs), shape_of(rhs))
        super().__init__(operands=[lhs, rhs], result_types=[with_shape(lhs, shape)])

    def result_shape(self) -> Shape:
        return broadcast_shapes(self.name, shape_of(self.lhs), shape_of(self.rhs))


@irdl_op_definition
class AddOp(BinaryOp):
    """lhs + rhs, broadcast (ONNX Add); also of i32 or i64 integers, wrapping on overflow."""

    INTEGER_ARITHMETIC: ClassVar[bool] = True

    name = "nn.add"


@irdl_op_definition
class SubOp(BinaryOp):
    """lhs - rhs, broadcast (ONNX Sub); also of i32 or i64 integers, wrapping on overflow."""

    INTEGER_ARITHMETIC: ClassVar[bool] = True

    name = "nn.sub"


@irdl_op_definition
class MulOp(BinaryOp):
    """lhs * rhs, broadcast (ONNX Mul); also of i32 or i64 integers, wrapping on overflow."""

    INTEGER_ARITHMETIC: ClassVar[bool] = True

    name = "nn.mul"


@irdl_op_definition
class DivOp(BinaryOp):
    """lhs / rhs, broadcast, IEEE division (ONNX Div)."""

    name = "nn.div"


@irdl_op_definition
class MaxOp(BinaryOp):
    """The larger of lhs and rhs, broadcast; NaN if either is NaN (ONNX Max of two inputs:
    onnxruntime and ONNX's reference evaluator both propagate NaN, as numpy's maximum); also
    of i32 or i64 integers (a position clamped to a cache's length)."""

    INTEGER_ARITHMETIC: ClassVar[bool] = True

    name = "nn.max"


@irdl_op_definition
class MinOp(BinaryOp):
    """The smaller of lhs and rhs, broadcast; NaN if either is NaN (ONNX Min of two inputs,
    as `MaxOp`); also of i32 or i64 integers."""

    INTEGER_ARITHMETIC: ClassVar[bool] = True

    name = "nn.min"


@irdl_op_definition
class PReluOp(BinaryOp):
    """lhs where lhs >= 0 (or NaN), else slope * lhs, with the slope (rhs) broadcast to lhs's
    shape, never the other way (ONNX PRelu's unidirectional broadcasting): a slope of shape
    [C, 1, 1], [C], [1] or [1, C, 1, 1] against an [N, C, H, W] input."""

    name = "nn.prelu"

    def __init__(self, lhs: Value, rhs: Value):
        super().__init__(lhs, rhs)
        self.verify_()  # like the other builders, reject what the verifier would

    def result_shape(self) -> Shape:
        shape = super().result_shape()
        if shape != shape_of(self.lhs):
            raise VerifyException(
                f"{self.name}: slope of shape {list(shape_of(self.rhs))} does not broadcast "
                f"to the input's shape {list(shape_of(self.lhs))} (PRelu broadcasts the slope "
                "only)"
            )
        return shape


@irdl_op_definition
class SumOp(NNOp):
    """Element-wise sum of one or more tensors, with broadcasting (ONNX Sum)."""

    name = "nn.sum"
    inputs = var_operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $output)"

    def __init__(self, inputs: Sequence[Value]):
        shape = broadcast_shapes(self.name, *(shape_of(v) for v in inputs))
        super().__init__(operands=[list(inputs)], result_types=[with_shape(inputs[0], shape)])

    def result_shape(self) -> Shape:
        return broadcast_shapes(self.name, *(shape_of(v) for v in self.inputs))
