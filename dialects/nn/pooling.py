"""Pooling over the spatial axes: `nn.max_pool2d` (and where its maxima are,
`nn.max_pool2d_indices`), `nn.avg_pool2d`, `nn.global_avg_pool`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects.nn.base import (
    ARITHMETIC_INTEGER_TYPES,
    INTEGER_TYPES,
    NNOp,
    Shape,
    Value,
    i64_array,
    ints,
    is_float_type,
    shape_of,
    tensor_type,
    with_shape,
)
from nnlayout.dialects.nn.shape_rules import pool2d_shape


class Pool2dOp(NNOp):
    """Shared structure of max and average pooling over NCHW."""

    input = operand_def(TensorType)
    output = result_def(TensorType)
    kernel = prop_def(DenseArrayBase.constr(i64))
    strides = prop_def(DenseArrayBase.constr(i64))
    pads = prop_def(DenseArrayBase.constr(i64))
    dilations = prop_def(DenseArrayBase.constr(i64))
    ceil_mode = opt_prop_def(UnitAttr)
    traits = traits_def(Pure())

    def __init__(
        self,
        input: Value,
        *,
        kernel: Sequence[int],
        strides: Sequence[int] = (1, 1),
        pads: Sequence[int] = (0, 0, 0, 0),
        dilations: Sequence[int] = (1, 1),
        ceil_mode: bool = False,
        extra: dict[str, Attribute] | None = None,
        element_type: Attribute | None = None,
    ):
        """`element_type`: the result's, where it is not the input's."""
        shape = pool2d_shape(
            self.name, shape_of(input), kernel, strides, pads, dilations, ceil_mode
        )
        properties: dict[str, Attribute] = {
            "kernel": i64_array(kernel),
            "strides": i64_array(strides),
            "pads": i64_array(pads),
            "dilations": i64_array(dilations),
            **(extra or {}),
        }
        if ceil_mode:
            properties["ceil_mode"] = UnitAttr()
        result = with_shape(input, shape)
        if element_type is not None:
            result = TensorType(element_type, shape)
        super().__init__(operands=[input], result_types=[result], properties=properties)

    def result_shape(self) -> Shape:
        return pool2d_shape(
            self.name,
            shape_of(self.input),
            ints(self.kernel),
            ints(self.strides),
            ints(self.pads),
            ints(self.dilations),
            self.ceil_mode is not None,
        )


@irdl_op_definition
class MaxPool2dOp(Pool2dOp):
    """Max pooling; padded positions never win (they count as -inf)."""

    ELEMENTS: ClassVar[str] = "any"  # moves or selects: exact on quantized data

    name = "nn.max_pool2d"
    assembly_format = (
        "$input `kernel` $kernel `strides` $strides `pads` $pads `dilations` $dilations "
        "(`ceil_mode` $ceil_mode^)? attr-dict `:` type($input) `->` type($output)"
    )


@irdl_op_definition
class MaxPool2dIndicesOp(Pool2dOp):
    """Where max pooling's maxima are (ONNX MaxPool's Indices output, torch's
    `return_indices`): for each window, the flat index of its largest element in the whole
    input, (n * C + c) * H * W + h * W + w (with `column_major`, ONNX's storage_order 1:
    (n * C + c) * H * W + h + w * H). As onnxruntime: the first of equal maxima in row-major
    order wins, padding and NaN never win. i64 indices of float or integer data.

        %i = nn.max_pool2d_indices %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0]
             dilations [1, 1] : tensor<1x8x6x6xf32> -> tensor<1x8x3x3xi64>
    """

    name = "nn.max_pool2d_indices"
    column_major = opt_prop_def(UnitAttr)
    assembly_format = (
        "$input `kernel` $kernel `strides` $strides `pads` $pads `dilations` $dilations "
        "(`ceil_mode` $ceil_mode^)? (`column_major` $column_major^)? attr-dict `:` "
        "type($input) `->` type($output)"
    )

    def __init__(self, input: Value, *, column_major: bool = False, **window: Any):
        """`window`: Pool2dOp's kernel, strides, pads, dilations and ceil_mode."""
        extra = {"column_major": UnitAttr()} if column_major else None
        super().__init__(input, **window, extra=extra, element_type=i64)

    def verify_element_types(self) -> None:
        data = tensor_type(self.input).element_type
        if not is_float_type(data) and data not in (*INTEGER_TYPES, *ARITHMETIC_INTEGER_TYPES):
            raise VerifyException(f"{self.name}: pools floats or integers, got {data}")
        if tensor_type(self.output).element_type != i64:
            raise VerifyException(f"{self.name}: the result is i64 indices")


@irdl_op_definition
class AvgPool2dOp(Pool2dOp):
    """Average pooling; padded positions count in the divisor only with count_include_pad."""

    name = "nn.avg_pool2d"
    count_include_pad = opt_prop_def(UnitAttr)
    assembly_format = (
        "$input `kernel` $kernel `strides` $strides `pads` $pads `dilations` $dilations "
        "(`ceil_mode` $ceil_mode^)? (`count_include_pad` $count_include_pad^)? attr-dict "
        "`:` type($input) `->` type($output)"
    )

    def __init__(
        self,
        input: Value,
        *,
        kernel: Sequence[int],
        strides: Sequence[int] = (1, 1),
        pads: Sequence[int] = (0, 0, 0, 0),
        dilations: Sequence[int] = (1, 1),
        ceil_mode: bool = False,
        count_include_pad: bool = False,
    ):
        super().__init__(
            input,
            kernel=kernel,
            strides=strides,
            pads=pads,
            dilations=dilations,
            ceil_mode=ceil_mode,
            extra={"count_include_pad": UnitAttr()} if count_include_pad else None,
        )


def varying_divisor(op: Pool2dOp) -> str | None:
    """Why an average pooling (`nn.avg_pool2d`, `nn.qavg_pool2d`) does not divide every
    window by one count, its size (None where it does): pads that do not count
    (count_include_pad absent), or ceil_mode windows past the padded end, whose overhang
    does not count."""
    pads = ints(op.pads)
    if op.properties.get("count_include_pad") is None and any(pads):
        return "pads that do not count: a border window divides by its input positions only"
    window = (ints(op.kernel), ints(op.strides), pads, ints(op.dilations))
    if pool2d_shape(op.name, shape_of(op.input), *window, False) != shape_of(op.output):
        return "ceil_mode windows past the padded end, whose overhang does not count"
    return None


@irdl_op_definition
class GlobalAvgPoolOp(NNOp):
    """Mean over all spatial axes: [N, C, ...] -> [N, C, 1, ...]."""

    name = "nn.global_avg_pool"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: Value):
        shape = self._shape(shape_of(input))
        super().__init__(operands=[input], result_types=[with_shape(input, shape)])

    @staticmethod
    def _shape(x: Shape) -> Shape:
        if len(x) < 3:
            raise VerifyException(
                f"nn.global_avg_pool: input must have rank >= 3 (N, C, spatial...), got {list(x)}"
            )
        return x[:2] + (1,) * (len(x) - 2)

    def result_shape(self) -> Shape:
        return self._shape(shape_of(self.input))
