"""The shape rules of the element-wise ops (unary with their attributes, binary with
broadcasting, given and random, and its clashes; sum) and of data movement (concat, softmax,
flatten, reshape, transpose, constant) against numpy and ONNX's shape inference."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes
from xdsl.dialects.builtin import Float16Type, TensorType, f32
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects import nn
from nnlayout.dialects.layout import LayoutAttr
from nnlayout.tests.dialects.test_shape_rules import (
    SETTINGS,
    Shape,
    onnx_shape,
    result_shape,
    value,
)

# ------------------------------------------------------------------ element-wise
UNARY = [
    (nn.ReluOp, "Relu", {}),
    (nn.SigmoidOp, "Sigmoid", {}),
    (nn.TanhOp, "Tanh", {}),
    (nn.ExpOp, "Exp", {}),
    (nn.NegOp, "Neg", {}),
    (nn.AbsOp, "Abs", {}),
    (nn.SqrtOp, "Sqrt", {}),
    (nn.LeakyReluOp, "LeakyRelu", {"alpha": 0.2}),
    (nn.ClipOp, "Clip", {}),
]


@pytest.mark.parametrize(
    ("op_class", "onnx_op", "attributes"), UNARY, ids=[name for _, name, _ in UNARY]
)
def test_unary(op_class: type[nn.UnaryOp], onnx_op: str, attributes: dict[str, object]) -> None:
    shape = (2, 3, 5, 7)
    assert onnx_shape(onnx_op, [shape], attributes) == shape
    op = op_class(value(shape))
    assert result_shape(op) == shape
    # The result keeps the operand's type, element type and encoding included.
    blocked = value(shape, Float16Type(), LayoutAttr("NCHW8c"))
    assert op_class(blocked).results[0].type == blocked.type


def test_unary_attributes() -> None:
    x = value((4,))
    assert nn.LeakyReluOp(x, alpha=0.25).alpha.value.data == 0.25
    assert nn.LeakyReluOp(x).alpha.value.data == pytest.approx(0.01)
    clip = nn.ClipOp(x, min=0.0, max=6.0)
    assert (clip.min.value.data, clip.max.value.data) == (0.0, 6.0)
    assert nn.ClipOp(x).min is None and nn.ClipOp(x, max=1.0).min is None


BINARY = [(nn.AddOp, "Add"), (nn.SubOp, "Sub"), (nn.MulOp, "Mul"), (nn.DivOp, "Div")]


@pytest.mark.parametrize(("op_class", "onnx_op"), BINARY, ids=[name for _, name in BINARY])
@pytest.mark.parametrize(
    ("a", "b"),
    [
        ((8, 1, 6, 1), (7, 1, 5)),
        ((1,), (2, 3)),
        ((2, 3), (2, 3)),
        ((5, 4), (4,)),
        ((1, 16, 1, 1), (2, 16, 7, 7)),
    ],
)
def test_binary(op_class: type[nn.BinaryOp], onnx_op: str, a: Shape, b: Shape) -> None:
    expected = np.broadcast_shapes(a, b)
    assert onnx_shape(onnx_op, [a, b]) == expected
    assert result_shape(op_class(value(a), value(b))) == expected


@SETTINGS
@given(mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=4, min_side=1, max_side=5))
def test_broadcast_random(shapes: object) -> None:
    a, b, c = shapes.input_shapes  # type: ignore[attr-defined]
    expected = shapes.result_shape  # type: ignore[attr-defined]
    assert nn.broadcast_shapes("nn.sum", a, b, c) == expected
    assume(all(len(s) > 0 for s in (a, b, c)))  # nn ops take ranked, non-scalar tensors here
    assert result_shape(nn.SumOp([value(a), value(b), value(c)])) == expected
    assert result_shape(nn.MulOp(value(a), value(b))) == np.broadcast_shapes(a, b)


@SETTINGS
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_broadcast_clash(shape: list[int], data: st.DataObject) -> None:
    axis = data.draw(st.integers(0, len(shape) - 1))
    other = list(shape)
    other[axis] = data.draw(st.integers(2, 5).filter(lambda size: size != shape[axis]))
    assume(shape[axis] != 1)
    with pytest.raises(ValueError):
        np.broadcast_shapes(tuple(shape), tuple(other))
    with pytest.raises(VerifyException, match="do not broadcast"):
        nn.AddOp(value(shape), value(other))


def test_sum() -> None:
    shapes = [(2, 1, 4), (3, 1), (4,)]
    expected = np.broadcast_shapes(*shapes)
    assert onnx_shape("Sum", shapes) == expected
    assert result_shape(nn.SumOp([value(s) for s in shapes])) == expected
    assert result_shape(nn.SumOp([value((3, 2))])) == (3, 2)


# ------------------------------------------------------------ data movement
@pytest.mark.parametrize(
    ("shapes", "axis"),
    [
        ([(1, 64, 28, 28), (1, 32, 28, 28), (1, 16, 28, 28)], 1),
        ([(2, 3), (2, 5)], -1),
        ([(2, 3, 4), (5, 3, 4)], -3),
        ([(7,)], 0),
    ],
)
def test_concat(shapes: list[Shape], axis: int) -> None:
    expected = np.concatenate([np.zeros(s) for s in shapes], axis=axis).shape
    assert onnx_shape("Concat", shapes, {"axis": axis}) == expected
    op = nn.ConcatOp([value(s) for s in shapes], axis)
    assert result_shape(op) == expected
    assert op.normalized_axis == axis % len(expected)


@pytest.mark.parametrize("axis", [-3, -2, -1, 0, 1, 2])
def test_softmax(axis: int) -> None:
    shape = (2, 3, 4)
    assert onnx_shape("Softmax", [shape], {"axis": axis}, opset=13) == shape
    op = nn.SoftmaxOp(value(shape), axis)
    assert result_shape(op) == shape
    assert op.normalized_axis == axis % 3


@pytest.mark.parametrize("axis", range(-4, 5))
def test_flatten(axis: int) -> None:
    shape = (2, 3, 4, 5)
    split = axis % 4 if axis < 0 else axis
    expected = np.zeros(shape).reshape(math.prod(shape[:split]), -1).shape
    assert onnx_shape("Flatten", [shape], {"axis": axis}) == expected
    assert result_shape(nn.FlattenOp(value(shape), axis)) == expected


@pytest.mark.parametrize("target", [(6, 20), (120,), (2, 3, 4, 5), (1, 120, 1), (5, 4, 3, 2)])
def test_reshape(target: Shape) -> None:
    shape = (2, 3, 4, 5)
    expected = np.zeros(shape).reshape(target).shape
    assert (
        onnx_shape("Reshape", [shape], initializers={"shape": np.array(target, dtype=np.int64)})
        == expected
    )
    assert result_shape(nn.ReshapeOp(value(shape), target)) == expected


@pytest.mark.parametrize(
    "perm", [*itertools.permutations(range(3)), (0, 2, 3, 1), (0, 3, 1, 2), (3, 2, 1, 0)]
)
def test_transpose(perm: Shape) -> None:
    shape = (2, 3, 4) if len(perm) == 3 else (2, 3, 4, 5)
    expected = np.zeros(shape).transpose(perm).shape
    assert onnx_shape("Transpose", [shape], {"perm": list(perm)}) == expected
    op = nn.TransposeOp(value(shape), perm)
    assert result_shape(op) == expected
    assert nn.ints(op.perm) == perm


def test_constant() -> None:
    array = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    op = nn.ConstantOp.from_array(array)
    assert result_shape(op) == (2, 3)
    np.testing.assert_array_equal(op.inline_array(), array)
    external = nn.ConstantOp(TensorType(f32, [64, 3, 7, 7]), external="conv1.weight")
    assert result_shape(external) == (64, 3, 7, 7)
    assert external.external is not None and external.external.data == "conv1.weight"
