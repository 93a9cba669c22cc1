"""Exporter patterns of binary ops and broadcasting, built with onnx.helper the way torch's
exporters write them (classic opset 17, dynamo opset 18), each checked against onnxruntime
through import, every target, padding on and off, interpreter and generated module: BatchNorm
as Mul and Add of [C, 1, 1] constants (older exports), PRelu with the slopes torch writes,
Max/Min of activations and with a scalar constant (ReLU6), Div by a per-channel constant.
Channel counts (20, 13) are no multiple of the blocks (8, 16), so padding lanes are exercised.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from nnlayout.diagnostics import UserError
from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import encoding_name
from nnlayout.frontends.onnx import import_model
from nnlayout.tests.helpers import check_against_onnxruntime, compile_module, onnx_model

RNG = np.random.default_rng(0)
OPSETS = [17, 18]


def _conv(name: str, x: str, out: str, weights: dict, cin: int, cout: int) -> onnx.NodeProto:
    weights[f"{name}.weight"] = (RNG.standard_normal((cout, cin, 3, 3)) * 0.3).astype(np.float32)
    weights[f"{name}.bias"] = RNG.standard_normal(cout).astype(np.float32) * 0.1
    return helper.make_node(
        "Conv", [x, f"{name}.weight", f"{name}.bias"], [out], name=name, pads=[1, 1, 1, 1]
    )


def _model(
    body: list[onnx.NodeProto], weights: dict, opset: int, c: int = 20, outputs: int = 1
) -> onnx.ModelProto:
    """x [1, 3, 8, 8] -> conv to c channels -> `body` (reading 'a', writing 'b') -> conv."""
    nodes = [
        _conv("/conv1", "x", "a", weights, 3, c),
        *body,
        _conv("/conv2", "b", "y", weights, c, 4),
    ]
    return onnx_model(nodes, {"x": [1, 3, 8, 8]}, ["y"], weights, opset=opset)


def _per_channel(c: int, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    return RNG.uniform(low, high, (c, 1, 1)).astype(np.float32)


def _kernels(module, target: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Kernel name -> the layout of its result, for the binary ops of `module` compiled."""
    compiled = compile_module(module, target, True)
    return {
        kernel_of(op).kernel_name.data: encoding_name(op.results[0].type)  # type: ignore[union-attr]
        for op in compiled.walk()
        if isinstance(op, nn.BinaryOp) and kernel_of(op) is not None
    }


@pytest.mark.parametrize("opset", OPSETS)
def test_batch_norm_as_mul_add_of_per_channel_constants(opset: int, tmp_path: Path) -> None:
    """conv -> Mul([C,1,1]) -> Add([C,1,1]) -> Relu, the old BatchNorm-as-affine export: the
    Mul and Add run blocked (numpy) and in oneDNN, with no reorder around them."""
    weights = {"/bn.scale": _per_channel(20, 0.5, 1.5), "/bn.shift": _per_channel(20)}
    body = [
        helper.make_node("Mul", ["a", "/bn.scale"], ["m"]),
        helper.make_node("Add", ["m", "/bn.shift"], ["s"]),
        helper.make_node("Relu", ["s"], ["b"]),
    ]
    module = check_against_onnxruntime(_model(body, weights, opset), tmp_path)
    assert _kernels(module, "avx2") == {"mul_any": "NCHW8c", "add_any": "NCHW8c"}
    assert set(_kernels(module, "onednn-nchw16c")) == {"mul_onednn", "add_onednn"}


@pytest.mark.parametrize("slope_shape", [(13, 1, 1), (1,), (1, 13, 1, 1)])
@pytest.mark.parametrize("opset", OPSETS)
def test_prelu_after_conv(opset: int, slope_shape: tuple[int, ...], tmp_path: Path) -> None:
    """torch's PReLU(13) writes its slope as [13, 1, 1], PReLU() as [1]."""
    weights = {"/prelu.weight": RNG.uniform(-0.5, 0.5, slope_shape).astype(np.float32)}
    body = [helper.make_node("PRelu", ["a", "/prelu.weight"], ["b"])]
    check_against_onnxruntime(_model(body, weights, opset, c=13), tmp_path)


def test_prelu_after_gemm_with_a_vector_slope(tmp_path: Path) -> None:
    weights = {
        "w": RNG.standard_normal((12, 20)).astype(np.float32),
        "slope": RNG.uniform(-0.5, 0.5, 20).astype(np.float32),
    }
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"]),
        helper.make_node("PRelu", ["h", "slope"], ["y"]),
    ]
    check_against_onnxruntime(onnx_model(nodes, {"x": [3, 12]}, ["y"], weights), tmp_path)


@pytest.mark.parametrize("op_type", ["Max", "Min"])
def test_max_min_of_two_activations(op_type: str, tmp_path: Path) -> None:
    weights: dict = {}
    body = [
        _conv("/branch", "a", "c", weights, 20, 20),
        helper.make_node(op_type, ["a", "c"], ["b"]),
    ]
    module = check_against_onnxruntime(_model(body, weights, 17), tmp_path)
    kernel = op_type.lower()
    assert _kernels(module, "avx512") == {f"{kernel}_any": "NCHW16c"}
    assert _kernels(module, "onednn-nchw16c") == {f"{kernel}_onednn": "NCHW16c"}


@pytest.mark.parametrize("opset", OPSETS)
def test_relu6_as_max_min_with_scalars_is_a_clip(opset: int, tmp_path: Path) -> None:
    weights = {"zero": np.array(0.0, np.float32), "six": np.array([6.0], np.float32)}
    body = [
        helper.make_node("Max", ["a", "zero"], ["m"]),
        helper.make_node("Min", ["m", "six"], ["b"]),
    ]
    model = _model(body, weights, opset)
    module = check_against_onnxruntime(model, tmp_path)
    clips = [op for op in module.walk() if isinstance(op, nn.ClipOp)]
    assert [(op.min is not None, op.max is not None) for op in clips] == [
        (True, False),
        (False, True),
    ]
    assert not any(isinstance(op, nn.MaxOp | nn.MinOp) for op in module.walk())


def test_max_min_of_several_and_of_one_input(tmp_path: Path) -> None:
    """Variadic: three inputs chain as two nn.max; one input is the identity. The per-channel
    bound (not one value) stays an nn.min."""
    weights = {"cap": _per_channel(20, 0.0, 2.0)}
    body = [
        _conv("/branch", "a", "c", weights, 20, 20),
        helper.make_node("Max", ["a", "c", "a"], ["m"]),
        helper.make_node("Min", ["m", "cap"], ["n"]),
        helper.make_node("Max", ["n"], ["b"]),
    ]
    module = check_against_onnxruntime(_model(body, weights, 17), tmp_path)
    ops = [type(op) for op in module.walk() if isinstance(op, nn.BinaryOp)]
    assert ops == [nn.MaxOp, nn.MaxOp, nn.MinOp]


@pytest.mark.parametrize("channels", [20, 13])
def test_div_by_a_per_channel_constant(channels: int, tmp_path: Path) -> None:
    """The divisor's padding lanes are zero: 0 / 0 in the quotient's padding must not reach
    the next convolution."""
    weights = {"d": _per_channel(channels, 0.5, 2.0)}
    body = [helper.make_node("Div", ["a", "d"], ["b"])]
    check_against_onnxruntime(_model(body, weights, 17, c=channels), tmp_path)


def test_refusals_name_the_node() -> None:
    cases = [
        (
            [helper.make_node("Max", ["x", "s"], ["y"], name="/max")],
            {"x": [1, 4, 2, 2], "s": [4, 1, 1]},
            6,
            "Max before opset 8 does not broadcast",
        ),
        (
            [helper.make_node("PRelu", ["x", "s"], ["y"], name="/prelu")],
            {"x": [1, 4, 2, 2], "s": [1, 1, 4, 2, 2]},
            17,
            "does not broadcast to the input's shape",
        ),
        (
            [helper.make_node("PRelu", ["x", "s"], ["y"], name="/prelu")],
            {"x": [1, 4, 2, 2], "s": [4, 1, 1]},
            6,
            "PRelu before opset 7 with a slope of shape [4, 1, 1]",
        ),
    ]
    for nodes, inputs, opset, message in cases:
        model = onnx_model(nodes, inputs, ["y"], opset=opset)
        with pytest.raises(UserError) as error:
            import_model(model)
        text = str(error.value)
        assert message in text and nodes[0].name in text and "\n" not in text, text
