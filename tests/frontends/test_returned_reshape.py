"""A CNN whose output is its pooled features flattened, as torchvision's SqueezeNet ends: the
classic exporter writes GlobalAveragePool + Flatten, the dynamo exporter ReduceMean (keepdims)
+ Reshape. The returned value cannot be a view (the caller gets a buffer of its own), so the
flatten or reshape copies: on the oneDNN targets oneDNN's reorder does (`reshape_onednn`,
`flatten_onednn`), reading NHWC pooled features directly where the convolution keeps its data
so, and the census lists no numpy fallback. Checked against onnxruntime on every target,
padding on and off (all pairs with --runslow), interpreter and generated module."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from nnlayout.dialects import nn
from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.layout import encoding_name
from nnlayout.kernels.targets import get_target
from nnlayout.lowering.bufferize import activation_reorders
from nnlayout.reports.census import kernel_census
from nnlayout.tests.frontends.test_matmul_patterns import model, weights
from nnlayout.tests.helpers import DEFAULT_PIPELINE, check_against_onnxruntime, compile_module

ONEDNN_TARGETS = ["onednn", "host"]


def pooled_head(exporter: str, channels: int = 24) -> onnx.ModelProto:
    """conv -> relu -> global average pool -> flatten, the flattened features returned."""
    init: dict[str, np.ndarray] = {"w": weights(channels, 3, 3, 3), "b": weights(channels)}
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
    ]
    if exporter == "classic":
        nodes += [
            helper.make_node("GlobalAveragePool", ["r"], ["p"]),
            helper.make_node("Flatten", ["p"], ["y"], axis=1),
        ]
        return model(nodes, {"x": (1, 3, 8, 8)}, ["y"], init)
    init |= {"axes": np.array([-1, -2], np.int64), "shape": np.array([1, -1], np.int64)}
    nodes += [
        helper.make_node("ReduceMean", ["r", "axes"], ["p"], keepdims=1),
        helper.make_node("Reshape", ["p", "shape"], ["y"], allowzero=1),
    ]
    return model(nodes, {"x": (1, 3, 8, 8)}, ["y"], init, 18)


@pytest.mark.parametrize("exporter", ["classic", "dynamo"])
@pytest.mark.parametrize("channels", [24, 32])
def test_returned_flatten_is_onednn_copy(exporter: str, channels: int, tmp_path: Path) -> None:
    module = check_against_onnxruntime(pooled_head(exporter, channels), tmp_path)
    kernel = "flatten_onednn" if exporter == "classic" else "reshape_onednn"
    for target in ONEDNN_TARGETS:
        for padding in (True, False):
            compiled = compile_module(module, target, padding, DEFAULT_PIPELINE)
            census = kernel_census(compiled, get_target(target))
            assert census.fallbacks == {}, (target, padding, census.fallbacks, census.reasons)
            assert census.kernels[kernel] == 1, census.kernels
            (copy,) = (
                op.inner
                for op in compiled.walk()
                if isinstance(op, ComputeOp) and isinstance(op.inner, nn.ReshapeOp | nn.FlattenOp)
            )
            # The pooled features are read where the convolution left them: NHWC here, with
            # the input's reorder the only one (none to plain before the copy).
            assert encoding_name(copy.operands[0].type) == "NHWC", compiled
            assert activation_reorders(compiled) == 1, compiled
