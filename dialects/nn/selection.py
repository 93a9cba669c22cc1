"""Selections by value along one axis: `nn.argmax`, `nn.argmin` (ONNX ArgMax/ArgMin) and
`nn.topk` (the indices of ONNX TopK, whose values the importer gathers at them). Each
computes i64 indices of its input, float or integer, as onnxruntime does; none has a
oneDNN primitive, so their reference kernels run on every target, on plain data.

Like `nn.reduce`, `nn.argmax` keeps its axis (as size 1) whatever ONNX's keepdims says; the
importer reshapes where keepdims is 0.

    %i = nn.argmax %x axis 1 : tensor<1x21x8x8xf32> -> tensor<1x1x8x8xi64>
    %t = nn.topk %x axis 1 k 5 : tensor<2x100xf32> -> tensor<2x5xi64>
"""

from __future__ import annotations

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType, UnitAttr, i64
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
    NNOp,
    Shape,
    Value,
    is_float_type,
    normalize_axis,
    shape_of,
    tensor_type,
)


class SelectionOp(NNOp):
    """What the selections share: a float or i32/i64 input, i64 indices along `axis`
    (ONNX's, -rank..rank-1)."""

    input = operand_def(TensorType)
    output = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure())

    def __init__(self, input: Value, axis: int, count: int, properties: dict[str, Attribute]):
        """The op on `input` along `axis` giving `count` indices there, with `properties`
        besides the axis."""
        shape = list(shape_of(input))
        shape[normalize_axis(self.name, axis, len(shape))] = count
        super().__init__(
            operands=[input],
            result_types=[TensorType(i64, shape)],
            properties={"axis": IntegerAttr(axis, i64), **properties},
        )
        self.verify_()

    @property
    def normalized_axis(self) -> int:
        return normalize_axis(self.name, self.axis.value.data, len(shape_of(self.input)))

    def selected(self) -> int:
        """How many indices the op gives along its axis."""
        raise NotImplementedError

    def result_shape(self) -> Shape:
        shape = list(shape_of(self.input))
        shape[self.normalized_axis] = self.selected()
        return tuple(shape)

    def verify_element_types(self) -> None:
        data = tensor_type(self.input).element_type
        if not is_float_type(data) and data not in ARITHMETIC_INTEGER_TYPES:
            raise VerifyException(f"{self.name}: selects among floats, i32 or i64, got {data}")
        if tensor_type(self.output).element_type != i64:
            raise VerifyException(f"{self.name}: the result is i64 indices")


class ArgExtremumOp(SelectionOp):
    """The index of the largest (`nn.argmax`) or smallest (`nn.argmin`) element along `axis`,
    the axis kept as size 1, as onnxruntime scans for it: from the first element, a later one
    wins where it is strictly greater (smaller), or with `select_last` greater (smaller) or
    equal. NaN never wins, so a NaN first element is the answer, and NaN elsewhere is
    skipped."""

    select_last = opt_prop_def(UnitAttr)
    assembly_format = (
        "$input `axis` $axis (`select_last` $select_last^)? attr-dict `:` type($input) "
        "`->` type($output)"
    )

    def __init__(self, input: Value, axis: int, select_last: bool = False):
        super().__init__(input, axis, 1, {"select_last": UnitAttr()} if select_last else {})

    def selected(self) -> int:
        return 1


@irdl_op_definition
class ArgMaxOp(ArgExtremumOp):
    name = "nn.argmax"


@irdl_op_definition
class ArgMinOp(ArgExtremumOp):
    name = "nn.argmin"


@irdl_op_definition
class TopKOp(SelectionOp):
    """The indices of the `k` largest elements along `axis` (with `smallest`, the k
    smallest), in order, as onnxruntime's TopK sorts them: equal elements by index, NaN
    above every number (the first of the largest, the last of the smallest)."""

    name = "nn.topk"
    k = prop_def(IntegerAttr[I64])
    smallest = opt_prop_def(UnitAttr)
    assembly_format = (
        "$input `axis` $axis `k` $k (`smallest` $smallest^)? attr-dict `:` type($input) "
        "`->` type($output)"
    )

    def __init__(self, input: Value, axis: int, k: int, smallest: bool = False):
        flag = {"smallest": UnitAttr()} if smallest else {}
        super().__init__(input, axis, k, {"k": IntegerAttr(k, i64), **flag})

    def selected(self) -> int:
        k, size = self.k.value.data, shape_of(self.input)[self.normalized_axis]
        if not 1 <= k <= size:
            raise VerifyException(f"{self.name}: k {k} must be between 1 and the axis' size {size}")
        return k
