"""Boolean masks and selection: `nn.compare` makes an `i1` mask from two float or index
tensors, `nn.logical` combines two masks, `nn.where` selects between two tensors by a mask (ONNX
Equal, Less, LessOrEqual, Greater, GreaterOrEqual, IsNaN, And, Or, Xor, Not and Where).

    %m = nn.compare "gt" %x, %zero : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xi1>
    %k = nn.logical "and" %m, %causal : (tensor<1x8x4x4xi1>, tensor<4x4xi1>) -> tensor<1x8x4x4xi1>
    %y = nn.where %m, %x, %scaled : (tensor<1x8x4x4xi1>, tensor<1x8x4x4xf32>,
                                      tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>

Why `i1`: a mask is MLIR's `i1` tensor (`arith.cmpf`, `arith.select`, `tosa.select`), one byte
per element at run time (numpy's bool). Masks come from `nn.compare`, from constants (a causal
attention mask, folded at import) and from function arguments; `nn.where` reads them, they move
through `nn.reshape`, `nn.flatten`, `nn.transpose`, `nn.slice`, `nn.expand` and `nn.gather`,
`nn.logical` combines them, and `nn.cast` makes them f32 (1.0 where true) and other data masks
(true where non-zero, ONNX's Cast to bool: an int64 attention mask). Other ops refuse `i1` data
(`NNOp.NON_NUMERIC`), and kernels are given masks only where they say so (`Kernel.mask_data`).

The three ops broadcast all their operands (numpy/ONNX multidirectional). A comparison with a
NaN is false, but "ne" is true (IEEE, as numpy and ONNX). `nn.where` moves elements without
computing on them, so its two values may be floats, quantized integers (`ui8`, `i8`, `i32`) or
indices (`i64`) of one element type, which the result has: on quantized data it is exact when
both values have the result's scale and zero point.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import StringAttr, TensorType, i1, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects.nn.base import (
    INTEGER_TYPES,
    NNOp,
    Shape,
    Value,
    broadcast_shapes,
    is_float_type,
    shape_of,
    tensor_type,
)

#: The predicates of `nn.compare` that are ONNX operators, and those operators.
PREDICATES: dict[str, str] = {
    "eq": "Equal",
    "lt": "Less",
    "le": "LessOrEqual",
    "gt": "Greater",
    "ge": "GreaterOrEqual",
}
#: Every predicate: "ne" is true where the two differ or either is NaN (IsNaN(x) is x ne x).
ALL_PREDICATES = (*PREDICATES, "ne")
#: The operations of `nn.logical`, ONNX's And, Or and Xor (Not(x) is x xor true).
LOGICAL_OPERATIONS = ("and", "or", "xor")


def _element(value: SSAValue) -> Attribute:
    return tensor_type(value).element_type


@irdl_op_definition
class CompareOp(NNOp):
    """lhs <predicate> rhs, element by element and broadcast, as an `i1` mask; where either
    is NaN, false ("ne": true). Both operands are floats of one type, or both i64 (token
    ids: `ids == pad_id`)."""

    name = "nn.compare"
    predicate = prop_def(StringAttr)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$predicate $lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, predicate: str, lhs: Value, rhs: Value):
        shape = broadcast_shapes(self.name, shape_of(lhs), shape_of(rhs))
        super().__init__(
            operands=[lhs, rhs],
            result_types=[TensorType(i1, shape)],
            properties={"predicate": StringAttr(predicate)},
        )
        self.verify_()  # like the other builders, reject what the verifier would

    def result_shape(self) -> Shape:
        return broadcast_shapes(self.name, shape_of(self.lhs), shape_of(self.rhs))

    def verify_element_types(self) -> None:
        if self.predicate.data not in ALL_PREDICATES:
            raise VerifyException(
                f"nn.compare: unknown predicate '{self.predicate.data}'; expected one of "
                f"{', '.join(ALL_PREDICATES)}"
            )
        lhs, rhs = _element(self.lhs), _element(self.rhs)
        if not (is_float_type(lhs) or lhs == i64) or rhs != lhs:
            hint = (
                "; masks combine with nn.logical"
                if i1 in (lhs, rhs)
                else "; quantized data needs nn.dequantize first"
                if {lhs, rhs} & set(INTEGER_TYPES)
                else ""
            )
            raise VerifyException(
                f"nn.compare: compares two floats or two i64 (indices) of one type, got {lhs} "
                f"and {rhs}{hint}"
            )
        if _element(self.output) != i1:
            raise VerifyException(
                f"nn.compare: the result is an i1 mask, got element type {_element(self.output)}"
            )


@irdl_op_definition
class LogicalOp(NNOp):
    """lhs <operation> rhs ("and", "or", "xor") of two `i1` masks, element by element and
    broadcast."""

    name = "nn.logical"
    operation = prop_def(StringAttr)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$operation $lhs `,` $rhs attr-dict `:` functional-type(operands, results)"
    NON_NUMERIC: ClassVar[bool] = True

    def __init__(self, operation: str, lhs: Value, rhs: Value):
        shape = broadcast_shapes(self.name, shape_of(lhs), shape_of(rhs))
        super().__init__(
            operands=[lhs, rhs],
            result_types=[TensorType(i1, shape)],
            properties={"operation": StringAttr(operation)},
        )
        self.verify_()

    def result_shape(self) -> Shape:
        return broadcast_shapes(self.name, shape_of(self.lhs), shape_of(self.rhs))

    def verify_element_types(self) -> None:
        if self.operation.data not in LOGICAL_OPERATIONS:
            raise VerifyException(
                f"nn.logical: unknown operation '{self.operation.data}'; expected one of "
                f"{', '.join(LOGICAL_OPERATIONS)}"
            )
        types = [_element(v) for v in (self.lhs, self.rhs, self.output)]
        if any(t != i1 for t in types):
            raise VerifyException(
                f"nn.logical: combines two i1 masks into one, got {types[0]}, {types[1]} and "
                f"{types[2]}"
            )


@irdl_op_definition
class WhereOp(NNOp):
    """x where the mask is true, else y; the mask, x and y broadcast. x and y have one element
    type, a float, a quantized integer, indices or a mask, which the result has."""

    name = "nn.where"
    mask = operand_def(TensorType)
    x = operand_def(TensorType)
    y = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$mask `,` $x `,` $y attr-dict `:` functional-type(operands, results)"
    ELEMENTS: ClassVar[str] = "any"  # selects: exact on quantized data

    def __init__(self, mask: Value, x: Value, y: Value):
        shape = broadcast_shapes(self.name, shape_of(mask), shape_of(x), shape_of(y))
        super().__init__(
            operands=[mask, x, y], result_types=[TensorType(tensor_type(x).element_type, shape)]
        )
        self.verify_()  # like the other builders, reject what the verifier would

    def result_shape(self) -> Shape:
        return broadcast_shapes(self.name, shape_of(self.mask), shape_of(self.x), shape_of(self.y))

    def verify_element_types(self) -> None:
        if _element(self.mask) != i1:
            raise VerifyException(
                f"nn.where: the mask (operand 0) is an i1 tensor, got element type "
                f"{_element(self.mask)}"
            )
        x, y, out = _element(self.x), _element(self.y), _element(self.output)
        if not (is_float_type(x) or x in (*INTEGER_TYPES, i64, i1)) or y != x or out != x:
            raise VerifyException(
                f"nn.where: x, y and the result have one element type, a float or i1, ui8, i8, "
                f"i32, i64; got {x}, {y} and {out}"
            )
