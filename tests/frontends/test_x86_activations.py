"""An activation between a product and its quantize, as torch's x86 quantizer writes
EfficientNet's SiLU, MobileNetV3's hardswish and a transformer's Linear -> GELU (the
product's result is not quantized, the activation's is): fold-qdq makes it one `nn.qconv2d`
or `nn.qmatmul` with that `activation`, applied to the real result before the quantization,
which oneDNN's int8 convolution and matmul run as eltwise post-ops. Each activation (the
padding traps among them: hardsigmoid(0) = 0.5, softplus(0) = log 2, sigmoid(0) = 0.5 are
not the zero point; u8 with a zero point not 0) against onnxruntime within one quantization
step on every target, padding on and off, interpreter and generated module; no float
product and no float activation runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.tests.frontends.test_pt2e_exports import VNNI, C, X86Graph
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    check_against_onnxruntime,
    compile_module,
    everywhere,
    output_step,
    parse,
)

# The ONNX nodes of each activation (applied to `source`), and the name nn.qconv2d records.
ACTIVATIONS = {
    "silu": "swish",
    "HardSwish": "hardswish",
    "HardSigmoid": "hardsigmoid",
    "Sigmoid": "sigmoid",
    "Tanh": "tanh",
    "Elu": "elu",
    "Softplus": "softplus",
    "Gelu": "gelu",
}


def _activation(g: X86Graph, kind: str, source: str) -> str:
    if kind == "silu":
        return g.node("Mul", [source, g.node("Sigmoid", [source], "sig")], "act")
    if kind == "Gelu":
        return g.node("Gelu", [source], "act", approximate="tanh")
    return g.node(kind, [source], "act")


def x86_activated_conv(kind: str, stride: int = 1, groups: int = 1) -> onnx.ModelProto:
    """conv(dq(x), dq(w), b) -> activation -> Q -> DQ, u8 with zero points not 0, padded."""
    g = X86Graph()
    x = g.quantize("x", "input", 0.03, 131)
    inputs = [x, g.weights("conv", (C, C // groups, 3, 3)), g.bias("conv", C)]
    conv = g.node("Conv", inputs, "conv_y", pads=[1, 1, 1, 1], strides=[stride] * 2, group=groups)
    out = g.quantize(_activation(g, kind, conv), "out", 0.012, 37)
    size = (6 - 1) // stride + 1
    return g.model(out, [1, C, size, size])


@pytest.mark.parametrize("kind", list(ACTIVATIONS))
def test_activation_between_convolution_and_quantize_runs_in_int8(
    tmp_path: Path, kind: str
) -> None:
    model = x86_activated_conv(kind)
    module = check_against_onnxruntime(model, tmp_path, seed=2, step=output_step(model))
    _one_activated_convolution(module, ACTIVATIONS[kind])


@pytest.mark.parametrize(("stride", "groups"), [(2, 1), (1, C)], ids=["strided", "depthwise"])
def test_strided_and_depthwise_activated_convolutions(
    tmp_path: Path, stride: int, groups: int
) -> None:
    model = x86_activated_conv("silu", stride, groups)
    module = check_against_onnxruntime(model, tmp_path, seed=3, step=output_step(model))
    _one_activated_convolution(module, "swish")


def _one_activated_convolution(module: object, activation: str) -> None:
    """On `onednn` and `ref`: one nn.qconv2d with `activation`, no float convolution or
    activation, on oneDNN's kernel where it runs VNNI code."""
    for target in ("onednn", "ref"):
        compiled = compile_module(module, target, True, DEFAULT_PIPELINE)  # type: ignore[arg-type]
        names = {op.name for op in compiled.walk() if isinstance(op, nn.NNOp)}
        assert not {"nn.conv2d", "nn.qconv2d_to_float", f"nn.{activation}"} & names, names
        [conv] = [op for op in compiled.walk() if isinstance(op, nn.QConv2dOp)]
        assert conv.activation is not None and conv.activation.data == activation
        chosen = kernel_of(conv)
        assert chosen is not None
        family = "onednn" if target == "onednn" and VNNI else "ref"
        assert chosen.kernel_name.data == f"qconv2d_{family}"


def x86_shared_activation(kind: str) -> onnx.ModelProto:
    """EfficientNet's depthwise convolution as the x86 quantizer writes it: its activation's
    float result is quantized (into the SE block's pooling) and multiplied in float by the
    gate, here a Sigmoid of the input's mean."""
    g = X86Graph()
    x = g.quantize("x", "input", 0.03, 131)
    inputs = [x, g.weights("conv", (C, 1, 3, 3)), g.bias("conv", C)]
    conv = g.node("Conv", inputs, "conv_y", pads=[1, 1, 1, 1], group=C)
    act = _activation(g, kind, conv)
    pooled = g.quantize(
        g.node("GlobalAveragePool", [g.quantize(act, "act", 0.02, 3)], "pool"), "pool", 0.02, 3
    )
    gate = g.node("Sigmoid", [pooled], "gate")
    g.node("Mul", [act, gate], "y")
    return g.model("y", [1, C, 6, 6])


@pytest.mark.parametrize("kind", ["silu", "HardSwish"])
def test_activation_read_in_float_too_runs_in_the_convolution(tmp_path: Path, kind: str) -> None:
    """An activation whose float result is read elsewhere too stays float: it is the
    activation of an `nn.qconv2d_to_float` (oneDNN's int8 convolution writing f32, the
    activation an eltwise post-op), within f32 rounding of onnxruntime."""
    model = x86_shared_activation(kind)
    module = check_against_onnxruntime(model, tmp_path, seed=7, tolerance=1e-5)
    for target in ("onednn", "ref"):
        compiled = compile_module(module, target, True, DEFAULT_PIPELINE)
        names = {op.name for op in compiled.walk() if isinstance(op, nn.NNOp)}
        assert not {"nn.conv2d", f"nn.{ACTIVATIONS[kind]}"} & names, names
        [conv] = [op for op in compiled.walk() if isinstance(op, nn.QConv2dToFloatOp)]
        assert conv.activation is not None and conv.activation.data == ACTIVATIONS[kind]
        chosen = kernel_of(conv)
        family = "onednn" if target == "onednn" and VNNI else "ref"
        assert chosen is not None and chosen.kernel_name.data == f"qconv2d_to_float_{family}"


def x86_activated_linear(kind: str) -> onnx.ModelProto:
    """A Linear as the dynamo exporter writes it (MatMul by the transposed weights, Add of
    the bias) -> activation -> Q -> DQ, on [1, 5, C] tokens."""
    g = X86Graph()
    x = g.quantize("x", "input", 0.03, 131)
    weights = g.node("Transpose", [g.weights("fc", (16, C))], "fc_wt", perm=[1, 0])
    product = g.node("MatMul", [x, weights], "fc_mm")
    linear = g.node("Add", [product, g.bias("fc", 16)], "fc_y")
    out = g.quantize(_activation(g, kind, linear), "out", 0.012, 37)
    return g.model(out, [1, 5, 16], (1, 5, C))


@pytest.mark.parametrize("kind", ["Gelu", "HardSwish", "Sigmoid", "silu"])
def test_activation_between_linear_and_quantize_runs_in_int8(tmp_path: Path, kind: str) -> None:
    model = x86_activated_linear(kind)
    module = check_against_onnxruntime(model, tmp_path, seed=5, step=output_step(model))
    for target in ("onednn", "ref"):
        compiled = compile_module(module, target, True, DEFAULT_PIPELINE)
        names = {op.name for op in compiled.walk() if isinstance(op, nn.NNOp)}
        assert not {"nn.matmul", "nn.add", f"nn.{ACTIVATIONS[kind]}"} & names, names
        [product] = [op for op in compiled.walk() if isinstance(op, nn.QMatmulOp)]
        assert product.activation is not None and product.bias is not None
        assert product.activation.data == ACTIVATIONS[kind]
        chosen = kernel_of(product)
        family = "onednn" if target == "onednn" and VNNI else "ref"
        assert chosen is not None and chosen.kernel_name.data == f"qmatmul_{family}"


ACTIVATED = """
func.func @f(%x: tensor<1x8x5x5xui8>, %w: tensor<8x8x3x3xi8>, %b: tensor<8xf32>)
    -> tensor<1x8x5x5xui8> {
  %y = nn.qconv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1
      activation "hardsigmoid" alpha 0.2 beta 0.5 {clamp_max = 200 : i64,
      x_scale = dense<0.02> : tensor<f32>, x_zero_point = dense<140> : tensor<ui8>,
      w_scale = dense<0.01> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>,
      y_scale = dense<0.003> : tensor<f32>, y_zero_point = dense<11> : tensor<ui8>}
      : (tensor<1x8x5x5xui8>, tensor<8x8x3x3xi8>, tensor<8xf32>) -> tensor<1x8x5x5xui8>
  func.return %y : tensor<1x8x5x5xui8>
}
"""


def test_activation_then_clamp_by_definition() -> None:
    """y = clamp(quantize(hardsigmoid(real))), the clamp after the activation: the real
    result of float64 sums, hardsigmoid, quantized (half to even) with y's zero point, then
    clamped at 200 (hardsigmoid(r) / 0.003 + 11 reaches 344: the clamp and the saturation
    both bite). Every target, padding on and off, within one step."""
    module = parse(ACTIVATED)
    rng = np.random.default_rng(6)
    x = rng.integers(0, 256, (1, 8, 5, 5)).astype(np.uint8)
    w = rng.integers(-127, 128, (8, 8, 3, 3)).astype(np.int8)
    bias = rng.normal(0, 2000, 8).astype(np.float32)
    real_x = np.pad((x.astype(np.float64) - 140) * 0.02, ((0, 0), (0, 0), (1, 1), (1, 1)))
    real = np.zeros((1, 8, 5, 5))
    for i in range(3):
        for j in range(3):
            window = real_x[0, :, i : i + 5, j : j + 5]
            real[0] += np.tensordot(w[:, :, i, j].astype(np.float64) * 0.01, window, axes=1)
    real += (bias.astype(np.float64) * 0.02 * 0.01).reshape(1, -1, 1, 1)
    activated = np.clip(0.2 * real.astype(np.float32) + 0.5, 0, 1)
    want = np.clip(np.rint(activated / np.float32(0.003)) + 11, 0, 200)
    assert want.max() == 200 and want.min() < 200  # the clamp bites, not everywhere
    seen = 0
    for target, padding, _, (got,) in everywhere(module, [x, w, bias]):
        assert got.dtype == np.uint8
        assert np.abs(got.astype(np.int64) - want).max() <= 1, f"{target}, padding {padding}"
        seen += 1
    assert seen >= 4
