"""The `nn` dialect: neural-network operators on ranked tensors, with ONNX semantics.

Every op checks its attributes and operand shapes and that its declared result type is the one
its shape rule gives. The shape rules are plain functions (`conv2d_shape`, `pool2d_shape`, ...)
so that importers and passes compute result types the same way the verifier checks them; each op
also has a builder that derives its result type from its operands.

Shapes are logical (NCHW activations, OIHW weights, as in ONNX). A tensor may carry a
`#layout.layout<...>` or `#layout.storage<...>` encoding; it changes how the value is stored,
never its logical shape, so the shape rules ignore it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    I64,
    AnyFloat,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
    i64,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import ParseError, VerifyException

from nnlayout.dialects.compute import ComputeOp, YieldOp
from nnlayout.dialects.kernel_attr import KernelAttr, verify_kernel_fits
from nnlayout.dialects.layout import verify_encoding

Shape = tuple[int, ...]
Value = SSAValue | Operation


# --------------------------------------------------------------------------- helpers
def i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, tuple(values))


def ints(attr: DenseArrayBase) -> tuple[int, ...]:
    return tuple(int(v) for v in attr.get_values())


def tensor_type(value: Value) -> TensorType[Attribute]:
    """The tensor type of `value`; a VerifyException for any other type (the builders' shape
    rules read it: a pattern handing them a memref got a bare AssertionError)."""
    value_type = SSAValue.get(value).type
    if not isinstance(value_type, TensorType):
        raise VerifyException(f"nn ops take tensors; got a value of type {value_type}")
    return value_type


def shape_of(value: Value) -> Shape:
    return tuple(tensor_type(value).get_shape())


def with_shape(like: Value, shape: Sequence[int]) -> TensorType[Attribute]:
    """A plain tensor type of `shape` with the element type of `like`."""
    return TensorType(tensor_type(like).element_type, shape)


def normalize_axis(op_name: str, axis: int, rank: int, inclusive_end: bool = False) -> int:
    """ONNX-style axis in [-rank, rank) (or [-rank, rank] for flatten) -> non-negative."""
    upper = rank + 1 if inclusive_end else rank
    if not -rank <= axis < upper:
        raise VerifyException(
            f"{op_name}: axis {axis} is out of range for rank {rank} "
            f"(expected {-rank} <= axis < {upper})"
        )
    return axis + rank if axis < 0 else axis


def broadcast_shapes(op_name: str, *shapes: Shape) -> Shape:
    """numpy/ONNX multidirectional broadcasting, with a message naming the clash."""
    if not shapes:
        raise VerifyException(f"{op_name}: needs at least one input")
    rank = max(len(s) for s in shapes)
    result = []
    for i in range(rank):
        sizes = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            listed = ", ".join(str(list(s)) for s in shapes)
            raise VerifyException(
                f"{op_name}: shapes {listed} do not broadcast (dimension {i} of the "
                f"broadcast result has sizes {sorted(sizes)})"
            )
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def _require_len(op_name: str, name: str, values: Sequence[int], length: int) -> None:
    if len(values) != length:
        raise VerifyException(f"{op_name}: {name} needs {length} values, got {list(values)}")


def _require_positive(op_name: str, name: str, values: Sequence[int]) -> None:
    if any(v <= 0 for v in values):
        raise VerifyException(f"{op_name}: {name} must be positive, got {list(values)}")


def _require_non_negative(op_name: str, name: str, values: Sequence[int]) -> None:
    if any(v < 0 for v in values):
        raise VerifyException(f"{op_name}: {name} must be non-negative, got {list(values)}")


def _require_rank(op_name: str, name: str, shape: Shape, rank: int) -> None:
    if len(shape) != rank:
        raise VerifyException(
            f"{op_name}: {name} must have rank {rank}, got {len(shape)} ({list(shape)})"
        )


def _window_output(
    op_name: str,
    size: int,
    kernel: int,
    stride: int,
    pad_begin: int,
    pad_end: int,
    dilation: int,
    ceil_mode: bool,
    axis_name: str,
) -> int:
    pad_total = pad_begin + pad_end
    effective = dilation * (kernel - 1) + 1
    span = size + pad_total - effective
    # With ceil_mode a window may run past the end, so even a too-large first window counts.
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + pad_begin:
        # ONNX/PyTorch: the last window must start inside the input or its leading pad.
        out -= 1
    if out < 1:
        raise VerifyException(
            f"{op_name}: window of extent {effective} (kernel {kernel}, dilation {dilation}) "
            f"does not fit the padded {axis_name} size {size + pad_total}"
        )
    return out


# ------------------------------------------------------------------------ shape rules
def conv2d_shape(
    x: Shape,
    w: Shape,
    bias: Shape | None,
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    groups: int,
    op_name: str = "nn.conv2d",
) -> Shape:
    _require_rank(op_name, "input", x, 4)
    _require_rank(op_name, "weight", w, 4)
    _check_window_attrs(op_name, strides, pads, dilations)
    if groups <= 0:
        raise VerifyException(f"{op_name}: groups must be positive, got {groups}")
    n, c, h, wd = x
    o, i, kh, kw = w
    if c % groups:
        raise VerifyException(
            f"{op_name}: input has {c} channels, not divisible by groups={groups}"
        )
    if c // groups != i:
        raise VerifyException(
            f"{op_name}: input has {c} channels but weight expects {i * groups} (groups={groups})"
        )
    if o % groups:
        raise VerifyException(
            f"{op_name}: weight has {o} output channels, not divisible by groups={groups}"
        )
    if bias is not None and bias != (o,):
        raise VerifyException(f"{op_name}: bias must have shape [{o}], got {list(bias)}")
    oh = _window_output(op_name, h, kh, strides[0], pads[0], pads[2], dilations[0], False, "height")
    ow = _window_output(op_name, wd, kw, strides[1], pads[1], pads[3], dilations[1], False, "width")
    return (n, o, oh, ow)


def conv_transpose2d_shape(
    x: Shape,
    w: Shape,
    bias: Shape | None,
    strides: Sequence[int],
    pads: Sequence[int],
    output_padding: Sequence[int],
    dilations: Sequence[int],
    groups: int,
) -> Shape:
    op_name = "nn.conv_transpose2d"
    _require_rank(op_name, "input", x, 4)
    _require_rank(op_name, "weight", w, 4)
    _check_window_attrs(op_name, strides, pads, dilations)
    _require_len(op_name, "output_padding", output_padding, 2)
    _require_non_negative(op_name, "output_padding", output_padding)
    if groups <= 0:
        raise VerifyException(f"{op_name}: groups must be positive, got {groups}")
    for axis in range(2):
        if output_padding[axis] >= max(strides[axis], dilations[axis]):
            raise VerifyException(
                f"{op_name}: output_padding {list(output_padding)} must be smaller than "
                f"the stride or the dilation on each axis"
            )
    n, c, h, wd = x
    i, o_per_group, kh, kw = w
    if c != i:
        raise VerifyException(
            f"{op_name}: input has {c} channels but weight expects {i} "
            f"(weight is [C_in, C_out/groups, kH, kW])"
        )
    if c % groups:
        raise VerifyException(
            f"{op_name}: input has {c} channels, not divisible by groups={groups}"
        )
    o = o_per_group * groups
    if bias is not None and bias != (o,):
        raise VerifyException(f"{op_name}: bias must have shape [{o}], got {list(bias)}")
    sizes = []
    for axis, (size, k) in enumerate(((h, kh), (wd, kw))):
        out = (
            strides[axis] * (size - 1)
            + output_padding[axis]
            + (k - 1) * dilations[axis]
            + 1
            - pads[axis]
            - pads[axis + 2]
        )
        if out <= 0:
            raise VerifyException(
                f"{op_name}: pads {list(pads)} leave no output along spatial axis {axis}"
            )
        sizes.append(out)
    return (n, o, sizes[0], sizes[1])


def _check_window_attrs(
    op_name: str, strides: Sequence[int], pads: Sequence[int], dilations: Sequence[int]
) -> None:
    _require_len(op_name, "strides", strides, 2)
    _require_len(op_name, "pads", pads, 4)
    _require_len(op_name, "dilations", dilations, 2)
    _require_positive(op_name, "strides", strides)
    _require_non_negative(op_name, "pads", pads)
    _require_positive(op_name, "dilations", dilations)


def matmul_shape(a: Shape, b: Shape) -> Shape:
    op_name = "nn.matmul"
    if not a or not b:
        raise VerifyException(f"{op_name}: operands must have rank >= 1")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise VerifyException(
            f"{op_name}: contraction sizes differ: lhs {list(a)} has K={a2[-1]}, "
            f"rhs {list(b)} has K={b2[-2]}"
        )
    batch = broadcast_shapes(op_name, a2[:-2], b2[:-2])
    out = batch + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


def gemm_shape(a: Shape, b: Shape, c: Shape | None, trans_a: bool, trans_b: bool) -> Shape:
    op_name = "nn.gemm"
    _require_rank(op_name, "a", a, 2)
    _require_rank(op_name, "b", b, 2)
    m, k = (a[1], a[0]) if trans_a else a
    kb, n = (b[1], b[0]) if trans_b else b
    if k != kb:
        raise VerifyException(
            f"{op_name}: contraction sizes differ: a gives K={k}, b gives K={kb} "
            f"(trans_a={int(trans_a)}, trans_b={int(trans_b)})"
        )
    if c is not None and broadcast_shapes(op_name, c, (m, n)) != (m, n):
        raise VerifyException(
            f"{op_name}: c of shape {list(c)} does not broadcast to the result [{m}, {n}]"
        )
    return (m, n)


def pool2d_shape(
    op_name: str,
    x: Shape,
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    ceil_mode: bool,
) -> Shape:
    _require_rank(op_name, "input", x, 4)
    _check_window_attrs(op_name, strides, pads, dilations)
    _require_len(op_name, "kernel", kernel, 2)
    _require_positive(op_name, "kernel", kernel)
    for axis in range(2):
        extent = dilations[axis] * (kernel[axis] - 1) + 1
        if max(pads[axis], pads[axis + 2]) >= extent:
            raise VerifyException(
                f"{op_name}: pads {list(pads)} must be smaller than the window extent {extent} "
                f"(kernel {kernel[axis]}, dilation {dilations[axis]}) along spatial axis {axis}; "
                "a window would see only padding"
            )
    n, c, h, w = x
    oh = _window_output(
        op_name, h, kernel[0], strides[0], pads[0], pads[2], dilations[0], ceil_mode, "height"
    )
    ow = _window_output(
        op_name, w, kernel[1], strides[1], pads[1], pads[3], dilations[1], ceil_mode, "width"
    )
    return (n, c, oh, ow)


def concat_shape(shapes: Sequence[Shape], axis: int) -> Shape:
    op_name = "nn.concat"
    if not shapes:
        raise VerifyException(f"{op_name}: needs at least one input")
    rank = len(shapes[0])
    axis = normalize_axis(op_name, axis, rank)
    for index, shape in enumerate(shapes):
        if len(shape) != rank:
            raise VerifyException(
                f"{op_name}: input {index} has rank {len(shape)} ({list(shape)}), but input 0 "
                f"has rank {rank} ({list(shapes[0])})"
            )
        if any(shape[d] != shapes[0][d] for d in range(rank) if d != axis):
            raise VerifyException(
                f"{op_name}: input {index} has shape {list(shape)}, which differs from input 0 "
                f"{list(shapes[0])} outside the concatenation axis {axis}"
            )
    total = sum(s[axis] for s in shapes)
    return shapes[0][:axis] + (total,) + shapes[0][axis + 1 :]


def flatten_shape(x: Shape, axis: int) -> Shape:
    axis = normalize_axis("nn.flatten", axis, len(x), inclusive_end=True)
    return (math.prod(x[:axis]), math.prod(x[axis:]))


def transpose_shape(x: Shape, perm: Sequence[int]) -> Shape:
    if sorted(perm) != list(range(len(x))):
        raise VerifyException(
            f"nn.transpose: perm {list(perm)} is not a permutation of 0..{len(x) - 1}"
        )
    return tuple(x[p] for p in perm)


# ------------------------------------------------------------------------ base class
_CHECKED_TYPES: set[Attribute] = set()  # types that passed _check_type (a big model has few)


def _check_type(value_type: Attribute, what: str) -> None:
    """A static, non-empty float tensor with one of our encodings; `what` names the value."""
    if value_type in _CHECKED_TYPES:
        return
    if not isinstance(value_type, TensorType):
        raise VerifyException(f"{what} is not a tensor")
    shape = value_type.get_shape()
    if any(d < 0 for d in shape):
        raise VerifyException(
            f"{what} has a dynamic dimension ({value_type}); nn ops need static shapes"
        )
    if any(d == 0 for d in shape):
        raise VerifyException(
            f"{what} has a zero-size dimension ({value_type}); empty tensors are not supported"
        )
    verify_encoding(value_type, what)
    if not isinstance(value_type.element_type, Float16Type | Float32Type | Float64Type):
        # What the kernels and the runtime hold (bf16 compiled, then no tool could run it).
        raise VerifyException(
            f"{what} has element type {value_type.element_type}; nn ops compute on f16, f32 or f64"
        )
    if len(_CHECKED_TYPES) > 4096:
        _CHECKED_TYPES.clear()
    _CHECKED_TYPES.add(value_type)


class NNOp(IRDLOperation):
    """Common verification: static positive shapes, known encodings, one float element type,
    and a result type equal to the op's shape rule."""

    def result_shape(self) -> Shape:
        """The logical result shape the op's shape rule gives for its operands."""
        raise NotImplementedError

    def verify_(self) -> None:
        verify_kernel_fits(self)
        element_type: Attribute | None = None
        for kind, values in (("operand", self.operands), ("result", self.results)):
            for index, value in enumerate(values):
                _check_type(value.type, f"{self.name}: {kind} {index}")
                value_element = tensor_type(value).element_type
                if element_type is None:
                    element_type = value_element
                elif value_element != element_type:
                    raise VerifyException(
                        f"{self.name}: {kind} {index} has element type "
                        f"{value_element}, expected {element_type} like operand 0"
                    )
        expected = self.result_shape()
        actual = shape_of(self.results[0])
        if tuple(actual) != tuple(expected):
            raise VerifyException(
                f"{self.name}: result shape {list(actual)} does not match the inferred shape "
                f"{list(expected)}"
            )


# --------------------------------------------------------------------------- ops
@irdl_op_definition
class Conv2dOp(NNOp):
    """2-D convolution (ONNX Conv). pads = [top, left, bottom, right]; weight is OIHW."""

    name = "nn.conv2d"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    strides = prop_def(DenseArrayBase.constr(i64))
    pads = prop_def(DenseArrayBase.constr(i64))
    dilations = prop_def(DenseArrayBase.constr(i64))
    groups = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $weight (`,` $bias^)? `strides` $strides `pads` $pads "
        "`dilations` $dilations `groups` $groups attr-dict `:` functional-type(operands, results)"
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
            properties={
                "strides": i64_array(strides),
                "pads": i64_array(pads),
                "dilations": i64_array(dilations),
                "groups": IntegerAttr(groups, i64),
            },
        )

    def result_shape(self) -> Shape:
        return conv2d_shape(
            shape_of(self.input),
            shape_of(self.weight),
            None if self.bias is None else shape_of(self.bias),
            ints(self.strides),
            ints(self.pads),
            ints(self.dilations),
            self.groups.value.data,
        )


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
    """lhs + rhs, broadcast (ONNX Add)."""

    name = "nn.add"


@irdl_op_definition
class SubOp(BinaryOp):
    """lhs - rhs, broadcast (ONNX Sub)."""

    name = "nn.sub"


@irdl_op_definition
class MulOp(BinaryOp):
    """lhs * rhs, broadcast (ONNX Mul)."""

    name = "nn.mul"


@irdl_op_definition
class DivOp(BinaryOp):
    """lhs / rhs, broadcast, IEEE division (ONNX Div)."""

    name = "nn.div"


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


# The activations an `nn.fused_conv2d` may end with, by the name it prints.
ACTIVATIONS: dict[str, type[UnaryOp]] = {
    "relu": ReluOp,
    "leaky_relu": LeakyReluOp,
    "clip": ClipOp,
    "sigmoid": SigmoidOp,
    "tanh": TanhOp,
}


@irdl_op_definition
class FusedConv2dOp(NNOp):
    """A convolution with its epilogue: `activation(conv2d(input, weight) + bias + addend)`,
    made by `fuse-post-ops` for kernels that apply post-ops while the result is still in
    registers (oneDNN's post-ops: `sum` for the addend, `eltwise` for the activation).

        %y = nn.fused_conv2d %x, %w, %b add %r strides [1, 1] pads [0, 0, 0, 0]
               dilations [1, 1] groups 1 activation "relu" : (...) -> tensor<...>

    Attributes as `nn.conv2d`'s; `addend` has the result's type (a residual connection);
    `activation` names an element-wise op (`relu`, `leaky_relu` with `alpha`, `clip` with
    `min`/`max`, `sigmoid`, `tanh`) with that op's semantics, NaN included.
    """

    name = "nn.fused_conv2d"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = operand_def(TensorType)
    addend = opt_operand_def(TensorType)
    output = result_def(TensorType)
    strides = prop_def(DenseArrayBase.constr(i64))
    pads = prop_def(DenseArrayBase.constr(i64))
    dilations = prop_def(DenseArrayBase.constr(i64))
    groups = prop_def(IntegerAttr[I64])
    activation = opt_prop_def(StringAttr)
    alpha = opt_prop_def(FloatAttr[Float32Type])
    min = opt_prop_def(FloatAttr[Float32Type])
    max = opt_prop_def(FloatAttr[Float32Type])
    # Like arith's fastmath `nnan`: the program promises no NaN reaches the activation, so a
    # kernel may use an activation that would map NaN elsewhere (oneDNN's relu and clip).
    nnan = opt_prop_def(UnitAttr)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $weight `,` $bias (`add` $addend^)? `strides` $strides `pads` $pads "
        "`dilations` $dilations `groups` $groups (`activation` $activation^)? "
        "(`alpha` $alpha^)? (`min` $min^)? (`max` $max^)? (`nnan` $nnan^)? attr-dict "
        "`:` functional-type(operands, results)"
    )

    def __init__(
        self,
        conv: Conv2dOp | FusedConv2dOp,
        bias: Value,
        addend: Value | None = None,
        activation: UnaryOp | None = None,
        nnan: bool = False,
    ):
        """`conv` with `bias` (replacing its own), then `addend` and `activation` (whose
        attributes are taken over) applied to its result."""
        properties = {
            name: conv.properties[name] for name in ("strides", "pads", "dilations", "groups")
        }
        if activation is not None:
            properties["activation"] = StringAttr(activation.name.removeprefix("nn."))
            properties.update(activation.properties)
        if nnan:
            properties["nnan"] = UnitAttr()
        super().__init__(
            operands=[conv.input, conv.weight, bias, [] if addend is None else [addend]],
            result_types=[conv.output.type],
            properties=properties,
        )

    def result_shape(self) -> Shape:
        return conv2d_shape(
            shape_of(self.input),
            shape_of(self.weight),
            shape_of(self.bias),
            ints(self.strides),
            ints(self.pads),
            ints(self.dilations),
            self.groups.value.data,
        )

    def activation_op(self) -> UnaryOp | None:
        """The activation as a standalone op (None without one), for kernels that implement
        it as that op does; it reads a block argument of its own, so that `self`'s result
        gains no use."""
        if self.activation is None:
            return None
        properties = {
            name: self.properties[name]
            for name in ("alpha", "min", "max")
            if name in self.properties
        }
        block = Block(arg_types=[self.output.type])
        return ACTIVATIONS[self.activation.data].create(
            operands=[block.args[0]], result_types=[self.output.type], properties=properties
        )

    def verify_(self) -> None:
        super().verify_()
        if self.addend is not None and shape_of(self.addend) != shape_of(self.output):
            raise VerifyException(
                f"{self.name}: addend shape {list(shape_of(self.addend))} is not the result "
                f"shape {list(shape_of(self.output))}"
            )
        wanted: tuple[str, ...] = ()
        if self.activation is not None:
            if self.activation.data not in ACTIVATIONS:
                raise VerifyException(
                    f'{self.name}: unknown activation "{self.activation.data}"; expected one '
                    f"of {', '.join(ACTIVATIONS)}"
                )
            wanted = {"leaky_relu": ("alpha",), "clip": ("min", "max")}.get(
                self.activation.data, ()
            )
        for name in ("alpha", "min", "max"):
            if name in self.properties and name not in wanted:
                if self.activation is None:
                    raise VerifyException(
                        f"{self.name}: '{name}' is given but there is no activation"
                    )
                raise VerifyException(
                    f"{self.name}: '{name}' does not apply to activation \"{self.activation.data}\""
                )
        if (
            self.activation is not None
            and self.activation.data == "leaky_relu"
            and (self.alpha is None)
        ):
            raise VerifyException(f"{self.name}: activation \"leaky_relu\" needs 'alpha'")
        verify_clip_bounds(self.name, self.min, self.max)


@irdl_op_definition
class BatchNormOp(NNOp):
    """Inference batch normalization over axis 1:
    (x - mean) / sqrt(var + epsilon) * scale + bias."""

    name = "nn.batch_norm"
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

    def result_shape(self) -> Shape:
        x = shape_of(self.input)
        if len(x) < 2:
            raise VerifyException(f"nn.batch_norm: input must have rank >= 2, got {list(x)}")
        for name in ("scale", "bias", "mean", "var"):
            if shape_of(getattr(self, name)) != (x[1],):
                raise VerifyException(
                    f"nn.batch_norm: {name} must have shape [{x[1]}] (the input's channels), "
                    f"got {list(shape_of(getattr(self, name)))}"
                )
        if self.epsilon.value.data < 0:
            raise VerifyException(
                f"nn.batch_norm: epsilon must be non-negative, got {self.epsilon.value.data}"
            )
        return x


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
    ):
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
        super().__init__(
            operands=[input], result_types=[with_shape(input, shape)], properties=properties
        )

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

    name = "nn.max_pool2d"
    assembly_format = (
        "$input `kernel` $kernel `strides` $strides `pads` $pads `dilations` $dilations "
        "(`ceil_mode` $ceil_mode^)? attr-dict `:` type($input) `->` type($output)"
    )


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


@irdl_op_definition
class ConcatOp(NNOp):
    """The inputs joined along `axis`; the other dimensions agree (ONNX Concat)."""

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
class SoftmaxOp(NNOp):
    """Softmax along one axis (ONNX opset >= 13 semantics)."""

    name = "nn.softmax"
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

    @property
    def normalized_axis(self) -> int:
        return normalize_axis(self.name, self.axis.value.data, len(shape_of(self.input)))

    def result_shape(self) -> Shape:
        self.normalized_axis  # noqa: B018  (range check)
        return shape_of(self.input)


@irdl_op_definition
class FlattenOp(NNOp):
    """[d0..dk-1, dk..dn] -> [prod(d0..dk-1), prod(dk..dn)] for axis k (ONNX Flatten)."""

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


@irdl_op_definition
class ConstantOp(NNOp):
    """A constant tensor, either inline or stored in the module's weights file.

        %w = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
        %w = nn.constant external "conv1.weight" : tensor<64x3x7x7xf32>
        %b = nn.constant dense<[1.0, 2.0]> : tensor<2xf32> -> tensor<2xf32, #layout.layout<"C8c">>

    The last form is a constant stored in a layout (after `fold-constants` packed it): the value
    is given logically and materialised in the result type's layout when the program is loaded.

        An external constant names an array in the weights file that the enclosing module's
        `nn.weights` attribute points to (see `nnlayout.dialects.weights`).
    """

    name = "nn.constant"
    value = opt_prop_def(DenseIntOrFPElementsAttr)
    external = opt_prop_def(StringAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(
        self,
        result_type: TensorType[Attribute],
        *,
        value: DenseIntOrFPElementsAttr | None = None,
        external: str | None = None,
    ):
        properties: dict[str, Attribute] = {}
        if value is not None:
            properties["value"] = value
        if external is not None:
            properties["external"] = StringAttr(external)
        super().__init__(result_types=[result_type], properties=properties)

    @staticmethod
    def from_array(array: np.ndarray) -> ConstantOp:
        """An inline f32 constant holding `array`."""
        data = np.array(array, dtype="<f4", order="C")  # a 0-d array stays 0-d
        result_type = TensorType(f32, data.shape)
        return ConstantOp(
            result_type, value=DenseIntOrFPElementsAttr(result_type, BytesAttr(data.tobytes()))
        )

    def inline_array(self) -> np.ndarray:
        """The inline value as a numpy array (splats expanded)."""
        assert self.value is not None
        result_type = tensor_type(self.output)
        element_type = result_type.element_type
        assert isinstance(element_type, AnyFloat)
        dtype = np.dtype(f"<f{element_type.bitwidth // 8}")
        flat = np.frombuffer(self.value.data.data, dtype=dtype)
        shape = result_type.get_shape()
        if flat.size == 1 and math.prod(shape) != 1:
            return np.full(shape, flat[0], dtype=dtype)
        return flat.reshape(shape).copy()

    def result_shape(self) -> Shape:
        if (self.value is None) == (self.external is None):
            raise VerifyException(
                'nn.constant: needs exactly one of an inline dense<...> value or external "name"'
            )
        result = shape_of(self.output)
        if self.value is not None:
            value_type = self.value.type
            if tuple(value_type.get_shape()) != result or (
                value_type.get_element_type() != tensor_type(self.output).element_type
            ):
                raise VerifyException(
                    f"nn.constant: value of type {value_type} does not match the result type "
                    f"{self.output.type}"
                )
        return result

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        if parser.parse_optional_keyword("external") is not None:
            name = parser.parse_str_literal(" for the name of the external constant")
            attributes = parser.parse_optional_attr_dict()
            parser.parse_punctuation(":")
            start = parser.pos
            result_type = parser.parse_type()
            if not isinstance(result_type, TensorType):
                parser.raise_error(
                    f"nn.constant: expected a tensor type, got {result_type}", start, parser.pos
                )
            op = cls(result_type, external=name)
        else:
            start = parser.pos
            try:
                value = parser.parse_attribute()
            except ParseError as error:
                # xDSL reports a literal that does not fit its type (`dense<[1.0, 2.0]> :
                # tensor<3xf32>`) at the next token, often on the next line: point at the literal.
                if "\n" not in parser.lexer.input.content[start : error.span.start]:
                    raise
                parser.raise_error(error.msg, start, start + len("dense"))
            if not isinstance(value, DenseIntOrFPElementsAttr):
                parser.raise_error(
                    'nn.constant: expected dense<...> : tensor<...> or external "name"',
                    start,
                    parser.pos,
                )
            result_type = value.type
            if parser.parse_optional_punctuation("->") is not None:
                result_type = parser.parse_type()
            attributes = parser.parse_optional_attr_dict()
            op = cls(result_type, value=value)  # type: ignore[arg-type]
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        if self.external is not None:
            printer.print_string("external ")
            printer.print_string_literal(self.external.data)
            printer.print_op_attributes(self.attributes)
            printer.print_string(" : ")
            printer.print_attribute(self.output.type)
        else:
            assert self.value is not None
            printer.print_attribute(self.value)
            if self.output.type != self.value.type:
                printer.print_string(" -> ")
                printer.print_attribute(self.output.type)
            printer.print_op_attributes(self.attributes)


NN = Dialect(
    "nn",
    [
        Conv2dOp,
        FusedConv2dOp,
        ConvTranspose2dOp,
        MatmulOp,
        GemmOp,
        ReluOp,
        LeakyReluOp,
        SigmoidOp,
        TanhOp,
        ExpOp,
        NegOp,
        AbsOp,
        SqrtOp,
        ClipOp,
        AddOp,
        SubOp,
        MulOp,
        DivOp,
        SumOp,
        BatchNormOp,
        MaxPool2dOp,
        AvgPool2dOp,
        GlobalAvgPoolOp,
        ConcatOp,
        SoftmaxOp,
        FlattenOp,
        ReshapeOp,
        TransposeOp,
        ConstantOp,
        ComputeOp,
        YieldOp,
    ],
    [KernelAttr],
)
