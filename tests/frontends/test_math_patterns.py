"""Element-wise math as torch's exporters write it (Floor, Ceil, Round, Sign, the
trigonometric and hyperbolic functions and their inverses, Softsign, Celu), imported as the
ops of dialects/nn/math.py and checked against onnxruntime on every target, padding on and
off: each after a convolution to 5 channels (padded in every blocked layout) and before a
mean over the channels, where a function with f(0) != 0 (cos, cosh, acos) must not leak
into the padding lanes; and on special values: ties, signed zeros, infinities, NaN,
arguments outside a function's domain."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnlayout.dialects import nn
from nnlayout.tests.helpers import check_against_onnxruntime, like_onnxruntime_everywhere

RNG = np.random.default_rng(17)
OPS = sorted(nn.MATH_OPS) + ["Celu"]
SPECIAL = np.array(
    [
        [-2.5, -1.5, -0.5, -0.0, 0.0, 0.5, 1.5, 2.5, 0.49999997, -1.0, 1.0],
        [-np.inf, np.inf, np.nan, 3e38, -3e38, 0.9, -0.9, 2.0, 8388609.0, -8388609.5, 1e-30],
    ],
    np.float32,
)


def _model(nodes: list, inits: list, shape: list[int]) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "math",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _node(op_type: str, source: str, output: str) -> onnx.NodeProto:
    attrs = {"alpha": 0.7} if op_type == "Celu" else {}
    return helper.make_node(op_type, [source], [output], **attrs)


@pytest.mark.parametrize("op_type", OPS)
def test_between_a_convolution_and_a_mean_over_channels(op_type: str, tmp_path: Path) -> None:
    """conv(3 -> 5) -> f -> ReduceMean over the channels: the padding lanes of a blocked
    layout hold f(0) where f(0) != 0, which the mean must not count. The convolution's
    outputs are scaled into (-1, 1), the domain of asin, acos and atanh."""
    w = (RNG.standard_normal((5, 3, 3, 3)) / 30).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Tanh", ["c"], ["t"]),
        _node(op_type, "t", "f"),
        helper.make_node("ReduceMean", ["f"], ["y"], axes=[1], keepdims=1),
    ]
    if op_type == "Acosh":  # its domain is [1, inf)
        nodes[1] = helper.make_node("Exp", ["c"], ["t"])
    model = _model(nodes, [numpy_helper.from_array(w, "w")], [1, 3, 5, 6])
    check_against_onnxruntime(model, tmp_path)


@pytest.mark.parametrize("op_type", OPS)
def test_special_values(op_type: str) -> None:
    model = _model([_node(op_type, "x", "y")], [], list(SPECIAL.shape))
    like_onnxruntime_everywhere(model, [SPECIAL])


def test_floor_division_and_remainder_as_torch_writes_them(tmp_path: Path) -> None:
    """torch.floor(x * 3) / 2 + torch.round(x), and torch.remainder(x, 0.7): x - floor(x /
    0.7) * 0.7, after a convolution."""
    consts = {"three": 3.0, "two": 2.0, "step": 0.7}
    inits = [numpy_helper.from_array(np.array(v, np.float32), k) for k, v in consts.items()]
    w = (RNG.standard_normal((5, 3, 3, 3)) / 3).astype(np.float32)
    inits.append(numpy_helper.from_array(w, "w"))
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Mul", ["c", "three"], ["m"]),
        helper.make_node("Floor", ["m"], ["f"]),
        helper.make_node("Div", ["f", "two"], ["d"]),
        helper.make_node("Round", ["c"], ["r"]),
        helper.make_node("Add", ["d", "r"], ["a"]),
        helper.make_node("Div", ["c", "step"], ["q"]),
        helper.make_node("Floor", ["q"], ["fq"]),
        helper.make_node("Mul", ["fq", "step"], ["back"]),
        helper.make_node("Sub", ["c", "back"], ["rem"]),
        helper.make_node("Add", ["a", "rem"], ["y"]),
    ]
    check_against_onnxruntime(_model(nodes, inits, [1, 3, 5, 6]), tmp_path)
