"""Normalisations: `nn.batch_norm` (inference form) and `nn.softmax`."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.ir import SSAValue
from xdsl.irdl import (
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects.nn.base import (
    AlongAxisOp,
    NNOp,
    Shape,
    Value,
    shape_of,
    with_shape,
)


class BatchNormBase(NNOp):
    """What `nn.batch_norm` and `nn.qbatch_norm` share: an input over whose axis 1 the four
    vectors (scale, bias, mean, var) run, a result of its shape, and epsilon."""

    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    mean = operand_def(TensorType)
    var = operand_def(TensorType)
    output = result_def(TensorType)
    epsilon = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $scale `,` $bias `,` $mean `,` $var `epsilon` $epsilon attr-dict "
        "`:` functional-type(operands, results)"
    )

    def result_shape(self) -> Shape:
        x = shape_of(self.input)
        if len(x) < 2:
            raise VerifyException(f"{self.name}: input must have rank >= 2, got {list(x)}")
        for name in ("scale", "bias", "mean", "var"):
            if shape_of(getattr(self, name)) != (x[1],):
                raise VerifyException(
                    f"{self.name}: {name} must have shape [{x[1]}] (the input's channels), "
                    f"got {list(shape_of(getattr(self, name)))}"
                )
        if self.epsilon.value.data < 0:
            raise VerifyException(
                f"{self.name}: epsilon must be non-negative, got {self.epsilon.value.data}"
            )
        return x


@irdl_op_definition
class BatchNormOp(BatchNormBase):
    """Inference batch normalization over axis 1:
    (x - mean) / sqrt(var + epsilon) * scale + bias."""

    name = "nn.batch_norm"

    def __init__(
        self,
        input: Value,
        scale: Value,
        bias: Value,
        mean: Value,
        var: Value,
        epsilon: float = 1e-5,
    ):
        super().__init__(
            operands=[input, scale, bias, mean, var],
            result_types=[with_shape(input, shape_of(input))],
            properties={"epsilon": FloatAttr(epsilon, f32)},
        )
        self.verify_()  # like the other builders, reject what the verifier would


class SoftmaxBase(AlongAxisOp):
    """What `nn.softmax` and `nn.log_softmax` share: an input, a result of its type and the
    axis (ONNX's, opset >= 13 semantics). Neither is an instance of the other."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    output = result_def(T)
    axis = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure())
    assembly_format = "$input `axis` $axis attr-dict `:` type($input)"

    def __init__(self, input: Value, axis: int = -1):
        super().__init__(
            operands=[input],
            result_types=[SSAValue.get(input).type],
            properties={"axis": IntegerAttr(axis, i64)},
        )
        self.verify_()  # like the other builders, reject what the verifier would


@irdl_op_definition
class SoftmaxOp(SoftmaxBase):
    """Softmax along one axis (ONNX opset >= 13 semantics)."""

    name = "nn.softmax"


@irdl_op_definition
class LogSoftmaxOp(SoftmaxBase):
    """The logarithm of the softmax along one axis, x - max - log(sum(exp(x - max))) (ONNX
    LogSoftmax, opset >= 13 semantics; torch's `F.log_softmax`). Its own op rather than a
    flag on `nn.softmax`: its values are unbounded below where softmax's lie in [0, 1], so
    nothing that knows softmax (its bound, a pattern over it) may take it for one."""

    name = "nn.log_softmax"
