"""Swin's shifted-window attention adds its mask as the classic exporter writes it: the scores
[nW, heads, N, N] viewed as [1, nW, heads, N, N], plus the mask [1, nW, 1, N, N] (an
Unsqueeze of a constant), viewed back and softmaxed. oneDNN's binary runs that 5-D broadcast
(the heads axis) only in its reference code; described with the axes merged where they
broadcast alike ([nW, heads, N*N] + [nW, 1, N*N]), it runs jit code, so the add is
`add_onednn` and the census lists no numpy fallback. Checked against onnxruntime on every
target, padding on and off (all pairs with --runslow), interpreter and generated module."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from nnlayout.kernels.onednn.collapsed import collapsed_shapes
from nnlayout.kernels.targets import get_target
from nnlayout.reports.census import kernel_census
from nnlayout.tests.frontends.test_matmul_patterns import model, weights
from nnlayout.tests.helpers import DEFAULT_PIPELINE, check_against_onnxruntime, compile_module

ONEDNN_TARGETS = ["onednn", "host"]


def masked_window_scores(windows: int = 4, heads: int = 3, tokens: int = 9) -> onnx.ModelProto:
    """scores [nW, heads, N, N] -> view [1, nW, heads, N, N] + mask -> view back -> softmax."""
    mask = np.where(weights(windows, tokens, tokens) > 0, 0.0, -100.0).astype(np.float32)
    init = {
        "mask": mask,
        "one": np.array([1], np.int64),
        "zero": np.array([0], np.int64),
        "split": np.array([1, windows, heads, tokens, tokens], np.int64),
        "merged": np.array([-1, heads, tokens, tokens], np.int64),
    }
    nodes = [
        helper.make_node("Reshape", ["s", "split"], ["s5"]),
        helper.make_node("Unsqueeze", ["mask", "one"], ["m1"]),
        helper.make_node("Unsqueeze", ["m1", "zero"], ["m2"]),
        helper.make_node("Add", ["s5", "m2"], ["a"]),
        helper.make_node("Reshape", ["a", "merged"], ["a4"]),
        helper.make_node("Softmax", ["a4"], ["y"], axis=-1),
    ]
    return model(nodes, {"s": (windows, heads, tokens, tokens)}, ["y"], init)


def test_collapsed_shapes_merge_axes_that_broadcast_alike() -> None:
    assert collapsed_shapes((1, 64, 3, 49, 49), [(1, 64, 3, 49, 49), (1, 64, 1, 49, 49)]) == (
        (64, 3, 2401),
        [(64, 3, 2401), (64, 1, 2401)],
    )
    assert collapsed_shapes((2, 3, 4), [(2, 3, 4), (1, 3, 1)]) == (
        (2, 3, 4),
        [(2, 3, 4), (1, 3, 1)],
    )
    assert collapsed_shapes((5, 1, 7), [(5, 1, 7), (5, 1, 1)]) == ((5, 7), [(5, 7), (5, 1)])
    assert collapsed_shapes((1, 1), [(1, 1), (1, 1)]) == ((1,), [(1,), (1,)])


@pytest.mark.parametrize("heads", [3, 16])
def test_window_mask_add_runs_in_onednn(heads: int, tmp_path: Path) -> None:
    module = check_against_onnxruntime(masked_window_scores(heads=heads), tmp_path)
    for target in ONEDNN_TARGETS:
        for padding in (True, False):
            compiled = compile_module(module, target, padding, DEFAULT_PIPELINE)
            census = kernel_census(compiled, get_target(target))
            assert census.fallbacks == {}, (target, padding, census.fallbacks, census.reasons)
            assert census.kernels["add_onednn"] == 1, census.kernels
