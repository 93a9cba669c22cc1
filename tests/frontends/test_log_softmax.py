"""LogSoftmax (torch's `F.log_softmax`) as torch's exporters write it, imported as
`nn.log_softmax` and checked against onnxruntime on every target, padding on and off: over
the channels of a convolution's 5-channel result (padded in every blocked layout), over a
classifier's logits, before opset 13 (over the input coerced to 2-D), and on rows of -inf,
+inf, NaN and large magnitudes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnlayout.dialects import nn
from nnlayout.tests.helpers import (
    check_against_onnxruntime,
    chosen_kernels,
    compile_module,
    like_onnxruntime_everywhere,
)

RNG = np.random.default_rng(13)


def log_softmax_model(shape: list[int], axis: int, opset: int, conv: bool) -> onnx.ModelProto:
    """x -> (a 3x3 convolution keeping its channels) -> LogSoftmax(axis)."""
    nodes, inits, source = [], [], "x"
    if conv:
        w = (RNG.standard_normal((shape[1], shape[1], 3, 3)) / 4).astype(np.float32)
        inits.append(numpy_helper.from_array(w, "w"))
        nodes.append(helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]))
        source = "c"
    nodes.append(helper.make_node("LogSoftmax", [source], ["y"], axis=axis))
    graph = helper.make_graph(
        nodes,
        "log_softmax",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize(
    ("shape", "axis", "opset", "conv"),
    [
        ([1, 5, 6, 7], 1, 17, True),  # per-pixel class scores of a segmentation head
        ([1, 5, 6, 7], -1, 18, True),
        ([2, 10], -1, 17, False),  # a classifier's logits
        ([2, 10], 1, 18, False),
        ([2, 5, 3, 4], 1, 11, False),  # before opset 13: over [2, 60]
        ([2, 5, 3, 4], 3, 12, False),
    ],
)
def test_log_softmax(shape: list[int], axis: int, opset: int, conv: bool, tmp_path: Path) -> None:
    module = check_against_onnxruntime(log_softmax_model(shape, axis, opset, conv), tmp_path)
    assert any(isinstance(op, nn.LogSoftmaxOp) for op in module.walk())


def test_rows_of_special_values() -> None:
    """A row of -inf (NaN: -inf - -inf), a row with +inf (NaN), a row with NaN, a row of
    magnitudes whose exp overflows without the max subtracted, as onnxruntime gives them."""
    x = (RNG.standard_normal((6, 7)) * 3).astype(np.float32)
    x[0] = -np.inf
    x[1, 3] = np.inf
    x[2, 5] = np.nan
    x[3] = np.linspace(-3e38, 3e38, 7)
    x[4, 1] = -np.inf
    like_onnxruntime_everywhere(log_softmax_model([6, 7], -1, 17, False), [x])


def test_onednn_computes_it_on_the_last_axis() -> None:
    """On the oneDNN targets the product is oneDNN's softmax_log primitive."""
    module = like_onnxruntime_everywhere(
        log_softmax_model([2, 10], -1, 17, False),
        [RNG.standard_normal((2, 10)).astype(np.float32)],
    )
    compiled = compile_module(module, "onednn", True)
    assert chosen_kernels(compiled, nn.LogSoftmaxOp) == {"log_softmax_onednn"}
