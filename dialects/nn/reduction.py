"""Reductions and the normalisations that reduce: `nn.reduce`, `nn.layer_norm`, `nn.lrn`; and
the running sum `nn.cumsum`, a reduction of each prefix.

`nn.reduce` is one op with a `kind` (sum, mean, max, ...), not one op per kind: every kind
has the same operands, attributes, shape rule, verifier and layout rules, and oneDNN has one
reduction primitive with the kind as its algorithm, so a kernel's rules are written once and
the kind is data. Its result always keeps the reduced axes (as size 1): the rank does not
change, so a layout of the input (NCHW16c) names the result's too; the importer follows it
with an `nn.reshape` where ONNX's keepdims is 0.

    %m = nn.reduce %x kind "mean" axes [2, 3] : tensor<1x20x7x7xf32> -> tensor<1x20x1x1xf32>
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
    i64,
)
from xdsl.ir import SSAValue
from xdsl.irdl import (
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects.nn.base import (
    ARITHMETIC_INTEGER_TYPES,
    AlongAxisOp,
    NNOp,
    Shape,
    Value,
    i64_array,
    ints,
    normalize_axis,
    shape_of,
    tensor_type,
    with_shape,
)

#: The kinds of `nn.reduce`, with ONNX's operator for each.
REDUCE_KINDS: dict[str, str] = {
    "sum": "ReduceSum",
    "mean": "ReduceMean",
    "max": "ReduceMax",
    "min": "ReduceMin",
    "prod": "ReduceProd",
    "l1": "ReduceL1",
    "l2": "ReduceL2",
    "sum_square": "ReduceSumSquare",
    "log_sum": "ReduceLogSum",
}


#: The kinds `nn.reduce` computes on i32 and i64 data.
INTEGER_KINDS = ("sum", "max", "min", "prod")


def reduce_shape(x: Shape, axes: Sequence[int], op_name: str = "nn.reduce") -> Shape:
    """The shape of a reduction of `x` over `axes` (non-negative, strictly increasing, not
    empty) keeping them as size 1."""
    if not axes:
        raise VerifyException(f"{op_name}: axes must not be empty")
    if list(axes) != sorted(set(axes)):
        raise VerifyException(f"{op_name}: axes must be strictly increasing, got {list(axes)}")
    if axes[0] < 0 or axes[-1] >= len(x):
        raise VerifyException(
            f"{op_name}: axes {list(axes)} out of range for rank {len(x)} (0 <= axis < {len(x)})"
        )
    return tuple(1 if i in axes else d for i, d in enumerate(x))


@irdl_op_definition
class ReduceOp(NNOp):
    """A reduction over `axes` (kept as size 1), of one `kind`: sum, mean, max, min, prod,
    l1 (sum of |x|), l2 (sqrt of the sum of squares), sum_square, log_sum (log of the sum);
    ONNX's ReduceX semantics, NaN propagating. Of i32 and i64 data (torch's `any`, `all`
    and counts of a mask, exported as its cast to int64 reduced) only sum, max, min and prod,
    in the data's type (exact; past its range a sum wraps, where ONNX leaves it undefined)."""

    name = "nn.reduce"
    INTEGER_ARITHMETIC: ClassVar[bool] = True
    input = operand_def(TensorType)
    output = result_def(TensorType)
    kind = prop_def(StringAttr)
    axes = prop_def(DenseArrayBase.constr(i64))
    traits = traits_def(Pure())
    assembly_format = (
        "$input `kind` $kind `axes` $axes attr-dict `:` type($input) `->` type($output)"
    )

    def __init__(self, input: Value, kind: str, axes: Sequence[int]):
        shape = reduce_shape(shape_of(input), axes)
        super().__init__(
            operands=[input],
            result_types=[with_shape(input, shape)],
            properties={"kind": StringAttr(kind), "axes": i64_array(axes)},
        )
        self.verify_()  # like the other builders, reject what the verifier would

    @property
    def reduced_axes(self) -> tuple[int, ...]:
        return ints(self.axes)

    def result_shape(self) -> Shape:
        if self.kind.data not in REDUCE_KINDS:
            raise VerifyException(
                f"nn.reduce: unknown kind '{self.kind.data}'; expected one of "
                f"{', '.join(REDUCE_KINDS)}"
            )
        element = tensor_type(self.input).element_type
        if element in ARITHMETIC_INTEGER_TYPES and self.kind.data not in INTEGER_KINDS:
            raise VerifyException(
                f"nn.reduce: kind '{self.kind.data}' of {element} data; integers reduce by "
                f"{', '.join(INTEGER_KINDS)}"
            )
        return reduce_shape(shape_of(self.input), self.reduced_axes)


@irdl_op_definition
class LayerNormOp(NNOp):
    """ONNX LayerNormalization's first output: over the axes from `axis` to the last,
    (x - mean) / sqrt(variance + epsilon) * scale + bias, with the population variance;
    `scale` and `bias` have the normalised axes' shape (or one that broadcasts to it)."""

    name = "nn.layer_norm"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    epsilon = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $scale (`,` $bias^)? `axis` $axis `epsilon` $epsilon attr-dict "
        "`:` functional-type(operands, results)"
    )

    def __init__(
        self,
        input: Value,
        scale: Value,
        bias: Value | None = None,
        axis: int = -1,
        epsilon: float = 1e-5,
    ):
        super().__init__(
            operands=[input, scale, [] if bias is None else [bias]],
            result_types=[with_shape(input, shape_of(input))],
            properties={"axis": IntegerAttr(axis, i64), "epsilon": FloatAttr(epsilon, f32)},
        )
        self.verify_()  # like the other builders, reject what the verifier would

    @property
    def normalized_axis(self) -> int:
        return normalize_axis(self.name, self.axis.value.data, len(shape_of(self.input)))

    def result_shape(self) -> Shape:
        x = shape_of(self.input)
        normalised = x[self.normalized_axis :]
        for name in ("scale", "bias"):
            value = getattr(self, name)
            if value is None:
                continue
            shape = shape_of(value)
            aligned = len(shape) <= len(normalised) and all(
                s in (1, d) for s, d in zip(reversed(shape), reversed(normalised), strict=False)
            )
            if not aligned:
                raise VerifyException(
                    f"nn.layer_norm: {name} of shape {list(shape)} does not broadcast to the "
                    f"normalised axes {list(normalised)}"
                )
        if self.epsilon.value.data < 0:
            raise VerifyException(
                f"nn.layer_norm: epsilon must be non-negative, got {self.epsilon.value.data}"
            )
        return x


@irdl_op_definition
class LrnOp(NNOp):
    """ONNX LRN across channels (axis 1): x / (bias + alpha / size * square_sum) ** beta,
    where square_sum sums x**2 over the channels c - floor((size - 1) / 2) to
    c + ceil((size - 1) / 2) that exist."""

    name = "nn.lrn"
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    output = result_def(T)
    size = prop_def(IntegerAttr[I64])
    alpha = prop_def(FloatAttr[Float32Type])
    beta = prop_def(FloatAttr[Float32Type])
    bias = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure())
    assembly_format = (
        "$input `size` $size `alpha` $alpha `beta` $beta `bias` $bias attr-dict `:` type($input)"
    )

    def __init__(
        self, input: Value, size: int, alpha: float = 1e-4, beta: float = 0.75, bias: float = 1.0
    ):
        super().__init__(
            operands=[input],
            result_types=[SSAValue.get(input).type],
            properties={
                "size": IntegerAttr(size, i64),
                "alpha": FloatAttr(alpha, f32),
                "beta": FloatAttr(beta, f32),
                "bias": FloatAttr(bias, f32),
            },
        )
        self.verify_()  # like the other builders, reject what the verifier would

    def result_shape(self) -> Shape:
        x = shape_of(self.input)
        if len(x) < 3:
            raise VerifyException(
                f"nn.lrn: input must have rank >= 3 (N, C, spatial...), got {list(x)}"
            )
        if self.size.value.data < 1:
            raise VerifyException(f"nn.lrn: size must be positive, got {self.size.value.data}")
        return x


@irdl_op_definition
class CumSumOp(AlongAxisOp):
    """ONNX CumSum along `axis`: each element the sum of those before it on the axis and of
    itself (`exclusive`: not itself; `reverse`: of those after it), summed in order. On
    floats, and on i32 or i64 integers, wrapping on overflow: RoBERTa's position ids are the
    running count of its non-padding tokens."""

    name = "nn.cumsum"
    INTEGER_ARITHMETIC: ClassVar[bool] = True
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    output = result_def(T)
    axis = prop_def(IntegerAttr[I64])
    exclusive = opt_prop_def(UnitAttr)
    reverse = opt_prop_def(UnitAttr)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `axis` $axis (`exclusive` $exclusive^)? (`reverse` $reverse^)? attr-dict "
        "`:` type($input)"
    )

    def __init__(self, input: Value, axis: int, exclusive: bool = False, reverse: bool = False):
        flags = {"exclusive": exclusive, "reverse": reverse}
        super().__init__(
            operands=[input],
            result_types=[SSAValue.get(input).type],
            properties={"axis": IntegerAttr(axis, i64)}
            | {name: UnitAttr() for name, on in flags.items() if on},
        )
        self.verify_()  # like the other builders, reject what the verifier would
