"""Convolutions and matrix products: `nn.conv2d`, `nn.conv_transpose2d`, `nn.matmul`,
`nn.gemm`."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    TensorType,
    UnitAttr,
    f32,
    i64,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from nnlayout.dialects.nn.base import NNOp, Shape, Value, i64_array, ints, shape_of, with_shape
from nnlayout.dialects.nn.shape_rules import (
    conv2d_shape,
    conv_transpose2d_shape,
    gemm_shape,
    matmul_shape,
)

#: The window attributes of a 2-D convolution in an op's assembly format.
CONV_WINDOW_SYNTAX = "`strides` $strides `pads` $pads `dilations` $dilations `groups` $groups"


class ConvWindowOp(NNOp):
    """An op with a 2-D convolution's window attributes (`nn.conv2d`, `nn.fused_conv2d`,
    `nn.qconv2d`, `nn.conv_integer`): strides, pads = [top, left, bottom, right], dilations,
    groups, declared here once, with the shape rule they give (`conv2d_shape`)."""

    strides = prop_def(DenseArrayBase.constr(i64))
    pads = prop_def(DenseArrayBase.constr(i64))
    dilations = prop_def(DenseArrayBase.constr(i64))
    groups = prop_def(IntegerAttr[I64])

    @staticmethod
    def window_properties(
        strides: Sequence[int], pads: Sequence[int], dilations: Sequence[int], groups: int
    ) -> dict[str, Attribute]:
        return {
            "strides": i64_array(strides),
            "pads": i64_array(pads),
            "dilations": i64_array(dilations),
            "groups": IntegerAttr(groups, i64),
        }

    def window_shape(self, input: Value, weight: Value, bias: Value | None) -> Shape:
        """`conv2d_shape` of `input`, `weight` and `bias` with this op's window."""
        return conv2d_shape(
            shape_of(input),
            shape_of(weight),
            None if bias is None else shape_of(bias),
            ints(self.strides),
            ints(self.pads),
            ints(self.dilations),
            self.groups.value.data,
        )


@irdl_op_definition
class Conv2dOp(ConvWindowOp):
    """2-D convolution (ONNX Conv). pads = [top, left, bottom, right]; weight is OIHW."""

    name = "nn.conv2d"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        f"$input `,` $weight (`,` $bias^)? {CONV_WINDOW_SYNTAX} attr-dict "
        "`:` functional-type(operands, results)"
    )

    def __init__(
        self,
        input: Value,
        weight: Value,
        bias: Value | None = None,
        *,
        strides: Sequence[int] = (1, 1),
        pads: Sequence[int] = (0, 0, 0, 0),
        dilations: Sequence[int] = (1, 1),
        groups: int = 1,
    ):
        shape = conv2d_shape(
            shape_of(input),
            shape_of(weight),
            None if bias is None else shape_of(bias),
            strides,
            pads,
            dilations,
            groups,
        )
        super().__init__(
            operands=[input, weight, [] if bias is None else [bias]],
            result_types=[with_shape(input, shape)],
            properties=self.window_properties(strides, pads, dilations, groups),
        )

    def result_shape(self) -> Shape:
        return self.window_shape(self.input, self.weight, self.bias)


@irdl_op_definition
class ConvTranspose2dOp(NNOp):
    """2-D transposed convolution (ONNX ConvTranspose); weight is [C_in, C_out/groups, kH, kW]."""

    name = "nn.conv_transpose2d"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    strides = prop_def(DenseArrayBase.constr(i64))
    pads = prop_def(DenseArrayBase.constr(i64))
    output_padding = prop_def(DenseArrayBase.constr(i64))
    dilations = prop_def(DenseArrayBase.constr(i64))
    groups = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $weight (`,` $bias^)? `strides` $strides `pads` $pads "
        "`output_padding` $output_padding `dilations` $dilations `groups` $groups attr-dict "
        "`:` functional-type(operands, results)"
    )

    def __init__(
        self,
        input: Value,
        weight: Value,
        bias: Value | None = None,
        *,
        strides: Sequence[int] = (1, 1),
        pads: Sequence[int] = (0, 0, 0, 0),
        output_padding: Sequence[int] = (0, 0),
        dilations: Sequence[int] = (1, 1),
        groups: int = 1,
    ):
        shape = conv_transpose2d_shape(
            shape_of(input),
            shape_of(weight),
            None if bias is None else shape_of(bias),
            strides,
            pads,
            output_padding,
            dilations,
            groups,
        )
        super().__init__(
            operands=[input, weight, [] if bias is None else [bias]],
            result_types=[with_shape(input, shape)],
            properties={
                "strides": i64_array(strides),
                "pads": i64_array(pads),
                "output_padding": i64_array(output_padding),
                "dilations": i64_array(dilations),
                "groups": IntegerAttr(groups, i64),
            },
        )

    def result_shape(self) -> Shape:
        return conv_transpose2d_shape(
            shape_of(self.input),
            shape_of(self.weight),
            None if self.bias is None else shape_of(self.bias),
            ints(self.strides),
            ints(self.pads),
            ints(self.output_padding),
            ints(self.dilations),
            self.groups.value.data,
        )


@irdl_op_definition
class MatmulOp(NNOp):
    """numpy.matmul semantics: 1-D promotion and broadcast batch dimensions."""

    name = "nn.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: Value, rhs: Value):
        shape = matmul_shape(shape_of(lhs), shape_of(rhs))
        super().__init__(operands=[lhs, rhs], result_types=[with_shape(lhs, shape)])

    def result_shape(self) -> Shape:
        return matmul_shape(shape_of(self.lhs), shape_of(self.rhs))


@irdl_op_definition
class GemmOp(NNOp):
    """ONNX Gemm: alpha * op(a) @ op(b) + beta * c, c broadcast to [M, N]. A dense
    (fully-connected) layer is `gemm %x, %w, %b trans_b`."""

    name = "nn.gemm"
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    c = opt_operand_def(TensorType)
    output = result_def(TensorType)
    trans_a = opt_prop_def(UnitAttr)
    trans_b = opt_prop_def(UnitAttr)
    alpha = prop_def(FloatAttr[Float32Type])
    beta = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure())
    assembly_format = (
        "$a `,` $b (`,` $c^)? (`trans_a` $trans_a^)? (`trans_b` $trans_b^)? "
        "`alpha` $alpha `beta` $beta attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        a: Value,
        b: Value,
        c: Value | None = None,
        *,
        trans_a: bool = False,
        trans_b: bool = False,
        alpha: float = 1.0,
        beta: float = 1.0,
    ):
        shape = gemm_shape(
            shape_of(a), shape_of(b), None if c is None else shape_of(c), trans_a, trans_b
        )
        properties: dict[str, Attribute] = {
            "alpha": FloatAttr(alpha, f32),
            "beta": FloatAttr(beta, f32),
        }
        if trans_a:
            properties["trans_a"] = UnitAttr()
        if trans_b:
            properties["trans_b"] = UnitAttr()
        super().__init__(
            operands=[a, b, [] if c is None else [c]],
            result_types=[with_shape(a, shape)],
            properties=properties,
        )

    def result_shape(self) -> Shape:
        return gemm_shape(
            shape_of(self.a),
            shape_of(self.b),
            None if self.c is None else shape_of(self.c),
            self.trans_a is not None,
            self.trans_b is not None,
        )
