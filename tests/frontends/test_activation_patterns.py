"""The activations as torch's exporters write them, built with onnx.helper: the classic
exporter (`dynamo=False`, opset 17) writes HardSwish and HardSigmoid as operators, SiLU as
Sigmoid then Mul, exact GELU as Div -> Erf -> Add -> Mul -> Mul and tanh GELU as its
polynomial; the dynamo exporter (opset 18+) may write Gelu (opset 20) itself, and Pow(x, c)
with a Constant exponent. Each is checked against onnxruntime through every target, padding
on and off, interpreter and generated module (`check_against_onnxruntime`), and the fused
forms are checked to be the ones the default pipeline compiles."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnlayout.diagnostics import UserError
from nnlayout.dialects import nn
from nnlayout.frontends.onnx import import_model
from nnlayout.kernels.onednn.binding import available as onednn_available
from nnlayout.tests.helpers import DEFAULT_PIPELINE, check_against_onnxruntime, compile_module

# 3 -> 5 -> 6 channels on a 7x7 image: 5 is padded in every blocked layout.
IMAGE = [1, 3, 7, 7]


class Graph:
    """A small ONNX graph under construction: named nodes, seeded weights."""

    def __init__(self, opset: int = 17):
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.opset = opset
        self.rng = np.random.default_rng(opset)

    def node(self, op_type: str, inputs: list[str], **attributes: object) -> str:
        output = f"{op_type.lower()}{len(self.nodes)}"
        self.nodes.append(helper.make_node(op_type, inputs, [output], **attributes))
        return output

    def constant(self, value: np.ndarray | float, name: str | None = None) -> str:
        name = name or f"c{len(self.initializers)}"
        array = np.asarray(value, np.float32)
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def conv(self, x: str, channels_in: int, channels_out: int, kernel: int = 3) -> str:
        weight = self.rng.standard_normal((channels_out, channels_in, kernel, kernel)) * 0.4
        bias = self.rng.standard_normal(channels_out) * 0.1
        pads = [kernel // 2] * 4
        return self.node("Conv", [x, self.constant(weight), self.constant(bias)], pads=pads)

    def model(self, output: str, shape: list[int] = IMAGE) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes,
            "pattern",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)],
            self.initializers,
        )
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)])


def conv_activation_conv(activation: str, opset: int = 17, **attributes: object) -> onnx.ModelProto:
    g = Graph(opset)
    y = g.node(activation, [g.conv("x", 3, 5)], **attributes)
    return g.model(g.conv(y, 5, 6))


def compiled_ops(model: onnx.ModelProto, target: str = "onednn") -> list[str]:
    """The op names (and a fused convolution's activation) after the default pipeline."""
    module = compile_module(import_model(model).module, target, True, DEFAULT_PIPELINE)
    names = []
    for op in module.walk():
        if isinstance(op, nn.FusedConv2dOp) and op.activation is not None:
            names.append(f"fused:{op.activation.data}")
        elif op.name.startswith("nn.") and op.name not in ("nn.constant", "nn.compute", "nn.yield"):
            names.append(op.name)
    return names


needs_onednn = pytest.mark.skipif(not onednn_available(), reason="oneDNN does not load here")


@pytest.mark.parametrize(
    ("activation", "opset", "attributes"),
    [
        ("HardSwish", 17, {}),
        ("HardSigmoid", 17, {"alpha": 0.2, "beta": 0.5}),  # 0.5 at 0 in the padding lanes
        ("Elu", 17, {"alpha": 0.8}),
        ("Selu", 17, {}),
        ("Softplus", 17, {}),  # log 2 at 0
        ("Mish", 18, {}),
        ("Gelu", 20, {}),
        ("Gelu", 20, {"approximate": "tanh"}),
    ],
)
def test_conv_activation_conv(
    activation: str, opset: int, attributes: dict, tmp_path: Path
) -> None:
    check_against_onnxruntime(conv_activation_conv(activation, opset, **attributes), tmp_path)


@needs_onednn
@pytest.mark.parametrize(
    ("activation", "opset", "fused"),
    [("HardSwish", 17, "hardswish"), ("Mish", 18, "mish"), ("Gelu", 20, "gelu")],
)
def test_activation_after_a_convolution_is_its_post_op(
    activation: str, opset: int, fused: str
) -> None:
    ops = compiled_ops(conv_activation_conv(activation, opset))
    assert ops[0] == f"fused:{fused}", ops


def squeeze_excite(g: Graph, x: str, channels: int, gate: str) -> str:
    """torchvision's SqueezeExcitation: x * gate(fc2(relu(fc1(avgpool(x))))), the fcs 1x1
    convolutions; MobileNetV3's gate is HardSigmoid (torch writes alpha 1/6), EfficientNet's
    Sigmoid."""
    pooled = g.node("GlobalAveragePool", [x])
    squeezed = g.node("Relu", [g.conv(pooled, channels, 3, kernel=1)])
    excited = g.conv(squeezed, 3, channels, kernel=1)
    attributes = {"alpha": 1 / 6} if gate == "HardSigmoid" else {}
    return g.node("Mul", [x, g.node(gate, [excited], **attributes)])


def test_mobilenet_v3_block(tmp_path: Path) -> None:
    """conv -> HardSwish -> squeeze-excite with a HardSigmoid gate -> conv."""
    g = Graph()
    x = g.node("HardSwish", [g.conv("x", 3, 5)])
    check_against_onnxruntime(
        g.model(g.conv(squeeze_excite(g, x, 5, "HardSigmoid"), 5, 6)), tmp_path
    )


def efficientnet_block() -> onnx.ModelProto:
    """conv -> SiLU (Sigmoid, Mul) -> squeeze-excite with a Sigmoid gate -> conv."""
    g = Graph()
    c = g.conv("x", 3, 5)
    x = g.node("Mul", [c, g.node("Sigmoid", [c])])
    return g.model(g.conv(squeeze_excite(g, x, 5, "Sigmoid"), 5, 6))


def test_efficientnet_block(tmp_path: Path) -> None:
    check_against_onnxruntime(efficientnet_block(), tmp_path)


@needs_onednn
def test_silu_becomes_a_swish_post_op_and_the_gate_stays() -> None:
    ops = compiled_ops(efficientnet_block())
    assert ops[0] == "fused:swish", ops
    assert "nn.sigmoid" in ops or "fused:sigmoid" in ops  # the squeeze-excite gate
    assert ops.count("nn.mul") == 1, ops


def test_hardswish_before_opset_14_is_hardsigmoid_times_x(tmp_path: Path) -> None:
    g = Graph(13)
    c = g.conv("x", 3, 5)
    model = g.model(g.conv(g.node("Mul", [c, g.node("HardSigmoid", [c], alpha=1 / 6)]), 5, 6))
    check_against_onnxruntime(model, tmp_path)
    if onednn_available():
        assert compiled_ops(model)[0] == "fused:hardswish"


def erf_gelu(g: Graph, x: str) -> str:
    """torch's classic export of exact GELU: ((x * (erf(x / sqrt 2) + 1)) * 0.5)."""
    erf = g.node("Erf", [g.node("Div", [x, g.constant(1.4142135381698608)])])
    return g.node(
        "Mul", [g.node("Mul", [x, g.node("Add", [erf, g.constant(1.0)])]), g.constant(0.5)]
    )


def tanh_gelu(g: Graph, x: str) -> str:
    """torch's classic export of GELU(approximate='tanh')."""
    cube = g.node("Mul", [x, g.node("Mul", [x, x])])
    inner = g.node("Add", [x, g.node("Mul", [g.constant(0.044715), cube])])
    tanh = g.node("Tanh", [g.node("Mul", [g.constant(math.sqrt(2 / math.pi)), inner])])
    return g.node(
        "Mul", [g.constant(0.5), g.node("Mul", [x, g.node("Add", [g.constant(1.0), tanh])])]
    )


def transformer_mlp(gelu: str) -> onnx.ModelProto:
    """A ViT MLP block on 2-D tokens: Gemm -> GELU -> Gemm (20 -> 12 -> 20 features)."""
    g = Graph()
    w1, w2 = (g.constant(g.rng.standard_normal(s) * 0.3) for s in ((12, 20), (20, 12)))
    h = g.node("Gemm", ["x", w1, g.constant(np.zeros(12))], transB=1)
    h = erf_gelu(g, h) if gelu == "erf" else tanh_gelu(g, h)
    return g.model(g.node("Gemm", [h, w2, g.constant(np.zeros(20))], transB=1), [6, 20])


@pytest.mark.parametrize("gelu", ["erf", "tanh"])
def test_exported_gelu_graphs(gelu: str, tmp_path: Path) -> None:
    model = transformer_mlp(gelu)
    check_against_onnxruntime(model, tmp_path)
    assert "nn.gelu" in compiled_ops(model, "ref")


@pytest.mark.parametrize("gelu", ["erf", "tanh"])
def test_exported_gelu_after_a_convolution(gelu: str, tmp_path: Path) -> None:
    g = Graph()
    c = g.conv("x", 3, 5)
    model = g.model(g.conv(erf_gelu(g, c) if gelu == "erf" else tanh_gelu(g, c), 5, 6))
    check_against_onnxruntime(model, tmp_path)
    if onednn_available():
        assert compiled_ops(model)[0] == "fused:gelu"


@pytest.mark.parametrize("exponent", [2.0, 0.5, 3.0])
def test_pow_with_a_constant_exponent(exponent: float, tmp_path: Path) -> None:
    """Pow(x, 2) (a square, as in a hand-written norm) and Pow(|x|, 0.5), the exponent a
    Constant node as dynamo writes it."""
    g = Graph(18)
    c = g.conv("x", 3, 5)
    base = g.node("Abs", [c]) if exponent == 0.5 else c
    g.nodes.append(
        helper.make_node(
            "Constant", [], ["e"], value=numpy_helper.from_array(np.array(exponent, np.float32))
        )
    )
    check_against_onnxruntime(g.model(g.conv(g.node("Pow", [base, "e"]), 5, 6)), tmp_path)


def test_pow_with_a_tensor_exponent_is_refused_in_one_line() -> None:
    g = Graph()
    c = g.conv("x", 3, 5)
    y = g.node("Pow", [c, g.constant(np.full((5, 1, 1), 2.0))])
    with pytest.raises(UserError) as error:
        import_model(g.model(y))
    message = str(error.value)
    assert "\n" not in message
    assert "(Pow)" in message and "must be a constant scalar" in message and "[5, 1, 1]" in message


def test_pow_with_a_computed_exponent_is_refused_in_one_line() -> None:
    g = Graph()
    c = g.conv("x", 3, 5)
    e = g.node("Abs", [c])  # computed at run time (an Abs of a constant folds at import)
    with pytest.raises(UserError, match=r"\(Pow\).*exponent 'abs\d+' must be a constant"):
        import_model(g.model(g.node("Pow", [c, e])))


def test_gelu_with_an_unknown_approximation_is_refused_in_one_line() -> None:
    model = conv_activation_conv("Gelu", 20, approximate="fast")
    with pytest.raises(UserError, match=r"\(Gelu\).*approximate 'fast' is not supported"):
        import_model(model)
