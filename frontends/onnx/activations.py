"""Converters of the ONNX activations with attributes (HardSigmoid, Elu, Selu, Gelu) and of
Pow with a constant scalar exponent, which becomes `nn.pow` with the exponent as attribute
(exports write Pow(x, 2.0) for a square and Pow(x, 0.5) for a root). The attribute-free
activations (HardSwish, Erf, Softplus, Mish, Reciprocal, Log) are in elementwise.py's UNARY."""

from __future__ import annotations

import onnx

from nnlayout.dialects import nn
from nnlayout.dialects.nn.activations import GELU_APPROXIMATIONS, SELU_ALPHA, SELU_GAMMA
from nnlayout.frontends.onnx.common import text_attribute
from nnlayout.frontends.onnx.state import ImportState


def hard_sigmoid(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    alpha, beta = float(attrs.get("alpha", 0.2)), float(attrs.get("beta", 0.5))
    state.output(node, state.build(lambda: nn.HardSigmoidOp(state.operand(node, 0), alpha, beta)))


def elu(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    alpha = float(attrs.get("alpha", 1.0))
    state.output(node, state.build(lambda: nn.EluOp(state.operand(node, 0), alpha)))


def celu(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    alpha = float(attrs.get("alpha", 1.0))
    state.output(node, state.build(lambda: nn.CeluOp(state.operand(node, 0), alpha)))


def selu(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    alpha = float(attrs.get("alpha", SELU_ALPHA))
    gamma = float(attrs.get("gamma", SELU_GAMMA))
    state.output(node, state.build(lambda: nn.SeluOp(state.operand(node, 0), alpha, gamma)))


def gelu(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    approximate = text_attribute(attrs, "approximate", "none")
    if approximate not in GELU_APPROXIMATIONS:
        raise state.fail(
            f"Gelu's approximate '{approximate}' is not supported (ONNX defines "
            f"{' and '.join(GELU_APPROXIMATIONS)})"
        )
    state.output(node, state.build(lambda: nn.GeluOp(state.operand(node, 0), approximate)))


def power(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """Pow(x, y) with y a constant of one element that does not raise x's rank: x ** y
    has x's shape. A tensor exponent is refused."""
    x = state.operand(node, 0)
    name = node.input[1]
    exponent = state.constant_array(name, "Pow's exponent")
    if exponent.size != 1 or exponent.ndim > len(nn.shape_of(x)):
        raise state.fail(
            f"Pow's exponent '{name}' must be a constant scalar (nnlayout imports Pow(x, c) "
            f"as x ** c), got shape {list(exponent.shape)}"
        )
    value = float(exponent.reshape(()))
    state.output(node, state.build(lambda: nn.PowOp(x, value)))
