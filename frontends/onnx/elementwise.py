"""Converters of the element-wise ONNX operators: the unary activations and math, the binary
arithmetic (with the broadcast rules before opset 7), Max and Min, PRelu, LeakyRelu, Clip, Sum,
and Dropout, which is the identity at inference."""

from __future__ import annotations

import functools
import math

import numpy as np
import onnx
from xdsl.ir import Operation, SSAValue

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.state import ImportState

UNARY: dict[str, type[nn.UnaryOp]] = {
    "Relu": nn.ReluOp,
    "Sigmoid": nn.SigmoidOp,
    "Tanh": nn.TanhOp,
    "Exp": nn.ExpOp,
    "Neg": nn.NegOp,
    "Abs": nn.AbsOp,
    "Sqrt": nn.SqrtOp,
    "HardSwish": nn.HardSwishOp,
    "Erf": nn.ErfOp,
    "Softplus": nn.SoftplusOp,
    "Mish": nn.MishOp,
    "Reciprocal": nn.ReciprocalOp,
    "Log": nn.LogOp,
    **nn.MATH_OPS,
}
BINARY: dict[str, type[nn.BinaryOp]] = {
    "Add": nn.AddOp,
    "Sub": nn.SubOp,
    "Mul": nn.MulOp,
    "Div": nn.DivOp,
}


def unary(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """One of the `UNARY` operators."""
    state.output(node, state.build(lambda: UNARY[node.op_type](state.operand(node, 0))))


def binary(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """One of the `BINARY` operators."""
    lhs = state.operand(node, 0)
    rhs = _legacy_broadcast(state, node, attrs, lhs)
    state.output(node, state.build(lambda: BINARY[node.op_type](lhs, rhs)))


def _legacy_broadcast(
    state: ImportState, node: onnx.NodeProto, attrs: dict, lhs: SSAValue
) -> SSAValue:
    """A binary node's second operand. Before opset 7 it broadcasts only with
    `broadcast=1`, its dimensions matched to A's from `axis` on (the trailing ones
    without `axis`): it is reshaped so that numpy's trailing broadcast means the same."""
    rhs = state.operand(node, 1)
    a, b = list(nn.shape_of(lhs)), list(nn.shape_of(rhs))
    if state.opset >= 7:
        return rhs
    if not attrs.get("broadcast", 0):
        if a != b:
            raise state.fail(
                f"{node.op_type} before opset 7 without broadcast=1 needs "
                f"operands of one shape, got {a} and {b}"
            )
        return rhs
    if "axis" not in attrs:
        return rhs
    axis = int(attrs["axis"])
    axis = axis + len(a) if axis < 0 else axis
    if not 0 <= axis <= len(a) - len(b):
        raise state.fail(
            f"broadcast axis {attrs['axis']} does not fit B of shape {b} into A of shape {a}"
        )
    aligned = [*b, *[1] * (len(a) - axis - len(b))]
    return rhs if aligned == b else state.emit(state.build(lambda: nn.ReshapeOp(rhs, aligned)))


EXTREMA: dict[str, type[nn.BinaryOp]] = {"Max": nn.MaxOp, "Min": nn.MinOp}


def extremum(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """Max and Min, variadic: one input is the identity; more are chained pairwise as
    `nn.max` / `nn.min` (exact: each is associative and propagates NaN). Before opset 8 the
    inputs do not broadcast. Two inputs of which one is a constant of a single value that
    does not widen the other are `nn.clip` (ReLU6 written as Min(Max(x, 0), 6) runs as a
    clip, which a convolution fuses)."""
    inputs = [state.tensor(name) for name in node.input]
    shapes = {nn.shape_of(value) for value in inputs}
    if state.opset < 8 and len(shapes) > 1:
        raise state.fail(
            f"{node.op_type} before opset 8 does not broadcast; got shapes "
            f"{', '.join(str(list(shape)) for shape in sorted(shapes))}"
        )
    if (clipped := _as_clip(state, node, inputs)) is not None:
        state.output(node, clipped)
        return
    make = EXTREMA[node.op_type]
    result = inputs[0]
    for value in inputs[1:-1]:
        result = state.emit(state.build(functools.partial(make, result, value)))
    if len(inputs) == 1:
        state.output(node, result)
    else:
        state.output(node, state.build(functools.partial(make, result, inputs[-1])))


def _as_clip(state: ImportState, node: onnx.NodeProto, inputs: list[SSAValue]) -> Operation | None:
    """Max(x, c) as clip(x, min=c), Min(x, c) as clip(x, max=c), for a constant c of one
    (non-NaN) value broadcasting to x's shape: np.maximum(x, c) either way, NaN and signed
    zeros included (a tie returns c in both; so c must come second). Floats only: integers
    stay nn.max and nn.min, exact at any size."""
    if len(inputs) != 2 or not isinstance(inputs[1].owner, nn.ConstantOp):
        return None
    if not nn.is_float_type(nn.tensor_type(inputs[0]).element_type):
        return None
    name = state.aliases.get(node.input[1], node.input[1])
    if name not in state.constants:
        return None  # a graph input, which an initializer only defaults
    x, values = inputs[0], np.unique(state.constant_array(name, "bound"))
    shape = nn.broadcast_shapes(node.op_type, nn.shape_of(x), nn.shape_of(inputs[1]))
    if values.size != 1 or np.isnan(values[0]) or shape != nn.shape_of(x):
        return None
    bound = float(values[0])
    low, high = (bound, None) if node.op_type == "Max" else (None, bound)
    return state.build(functools.partial(nn.ClipOp, x, low, high))


def prelu(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """PRelu: the slope broadcasts to the input, never the input to the slope. Before opset
    7 a slope of one element is shared by every channel, as it broadcasts now; a longer one
    had no broadcast rule and is refused."""
    x, slope = state.operand(node, 0), state.operand(node, 1)
    if state.opset < 7 and math.prod(nn.shape_of(slope)) != 1:
        raise state.fail(
            f"PRelu before opset 7 with a slope of shape {list(nn.shape_of(slope))} is not "
            "supported (only a slope of one element, shared by every channel)"
        )
    state.output(node, state.build(lambda: nn.PReluOp(x, slope)))


def leaky_relu(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    state.output(
        node,
        state.build(
            lambda: nn.LeakyReluOp(state.operand(node, 0), float(attrs.get("alpha", 0.01)))
        ),
    )


def clip(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    if state.opset < 11:
        low, high = attrs.get("min"), attrs.get("max")
    else:
        low, high = (
            state.constant_scalar(node.input[i], what)
            if len(node.input) > i and node.input[i]
            else None
            for i, what in ((1, "min"), (2, "max"))
        )
    for what, bound in (("min", low), ("max", high)):
        if bound is not None and math.isnan(bound):
            raise state.fail(
                f"Clip's {what} is NaN, which ONNX leaves open (onnxruntime "
                "ignores such a bound, numpy and ONNX's reference evaluator "
                "give NaN): give a number, or leave the bound out"
            )
    # ONNX: an omitted bound is the lowest or largest float (so inf becomes 3.4e38).
    largest = float(np.finfo(np.float32).max)
    low = -largest if low is None else low
    high = largest if high is None else high
    if low > high:
        low = high  # ONNX: with min > max every element becomes max
    state.output(node, state.build(lambda: nn.ClipOp(state.operand(node, 0), low, high)))


def sum_inputs(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """Sum: the element-wise sum of all the node's inputs."""
    inputs = [state.tensor(name) for name in node.input]
    state.output(node, state.build(lambda: nn.SumOp(inputs)))


def dropout(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """Inference: the identity, as ONNX defines Dropout outside training mode."""
    if state.read_outputs(node):
        raise state.fail("Dropout's mask output is not supported")
    # Training mode: opset 12's training_mode input; before opset 7, is_test=0 (the
    # default there).
    training = (state.opset < 7 and not attrs.get("is_test", 0)) or (
        len(node.input) > 2
        and node.input[2]
        and state.constant_scalar(node.input[2], "training_mode")
    )
    if training:
        raise state.fail(
            "Dropout in training mode is not supported (nnlayout compiles for inference)"
        )
    state.output(node, state.operand(node, 0))
