"""Ops that rearrange a tensor: `nn.concat`, `nn.flatten`, `nn.reshape`, `nn.transpose`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    IntegerAttr,
    TensorType,
    i64,
)
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects.nn.base import (
    NNOp,
    Shape,
    Value,
    i64_array,
    ints,
    normalize_axis,
    shape_of,
    with_shape,
)
from nnlayout.dialects.nn.shape_rules import concat_shape, flatten_shape, transpose_shape


@irdl_op_definition
class ConcatOp(NNOp):
    """The inputs joined along `axis`; the other dimensions agree (ONNX Concat)."""

    ELEMENTS: ClassVar[str] = "any"  # moves or selects: exact on quantized data
    NON_NUMERIC: ClassVar[bool] = True  # masks and indices move like any other data

    name = "nn.concat"
    inputs = var_operand_def(TensorType)
    output = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure())
    assembly_format = "$inputs `axis` $axis attr-dict `:` functional-type($inputs, $output)"

    def __init__(self, inputs: Sequence[Value], axis: int):
        shape = concat_shape([shape_of(v) for v in inputs], axis)
        super().__init__(
            operands=[list(inputs)],
            result_types=[with_shape(inputs[0], shape)],
            properties={"axis": IntegerAttr(axis, i64)},
        )

    @property
    def normalized_axis(self) -> int:
        return normalize_axis(self.name, self.axis.value.data, len(shape_of(self.output)))

    def result_shape(self) -> Shape:
        return concat_shape([shape_of(v) for v in self.inputs], self.axis.value.data)


@irdl_op_definition
class FlattenOp(NNOp):
    """[d0..dk-1, dk..dn] -> [prod(d0..dk-1), prod(dk..dn)] for axis k (ONNX Flatten)."""

    ELEMENTS: ClassVar[str] = "any"  # moves or selects: exact on quantized data
    NON_NUMERIC: ClassVar[bool] = True  # masks and indices move like any other data

    name = "nn.flatten"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure())
    assembly_format = "$input `axis` $axis attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: Value, axis: int = 1):
        shape = flatten_shape(shape_of(input), axis)
        super().__init__(
            operands=[input],
            result_types=[with_shape(input, shape)],
            properties={"axis": IntegerAttr(axis, i64)},
        )

    def result_shape(self) -> Shape:
        return flatten_shape(shape_of(self.input), self.axis.value.data)


@irdl_op_definition
class ReshapeOp(NNOp):
    """Row-major reshape to the static result type (element count preserved)."""

    ELEMENTS: ClassVar[str] = "any"  # moves or selects: exact on quantized data
    NON_NUMERIC: ClassVar[bool] = True  # masks and indices move like any other data

    name = "nn.reshape"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: Value, shape: Sequence[int]):
        super().__init__(operands=[input], result_types=[with_shape(input, shape)])
        self.verify_()  # like the other builders, reject what the verifier would

    def result_shape(self) -> Shape:
        source, target = shape_of(self.input), shape_of(self.output)
        if math.prod(source) != math.prod(target):
            raise VerifyException(
                f"nn.reshape: cannot reshape {list(source)} ({math.prod(source)} elements) to "
                f"{list(target)} ({math.prod(target)} elements)"
            )
        return target


@irdl_op_definition
class TransposeOp(NNOp):
    """Permutes axes: result dim i is input dim perm[i]."""

    ELEMENTS: ClassVar[str] = "any"  # moves or selects: exact on quantized data
    NON_NUMERIC: ClassVar[bool] = True  # masks and indices move like any other data

    name = "nn.transpose"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    perm = prop_def(DenseArrayBase.constr(i64))
    traits = traits_def(Pure())
    assembly_format = "$input `perm` $perm attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: Value, perm: Sequence[int]):
        shape = transpose_shape(shape_of(input), perm)
        super().__init__(
            operands=[input],
            result_types=[with_shape(input, shape)],
            properties={"perm": i64_array(perm)},
        )

    def result_shape(self) -> Shape:
        return transpose_shape(shape_of(self.input), ints(self.perm))
