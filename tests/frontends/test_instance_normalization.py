"""InstanceNormalization: each (n, c) plane normalised over its spatial axes (`nn.layer_norm`
from axis 2, then the per-channel affine), and GroupNorm as torch's exporters write it with
it (wav2vec2's feature extractor: Reshape to [N, groups, -1], InstanceNormalization of ones
and zeros, Reshape back, Mul, Add). Against onnxruntime on every target, padding on and off,
interpreter and generated module; 20 channels pad to 32 in a blocked layout."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from nnlayout.dialects import nn
from nnlayout.tests.helpers import (
    assert_one_clean_error,
    like_onnxruntime_everywhere,
    onnx_file,
    tool_process,
    typed_model,
)

F = TensorProto.FLOAT
RNG = np.random.default_rng(11)


def _floats(*shape: int, scale: float = 1.0) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def group_norm(exporter_shape: list[int]) -> onnx.ModelProto:
    """Conv1d to 20 channels, then GroupNorm(4 groups, 20 channels) as torch writes it."""
    constants = {
        "w": _floats(20, 3, 5, scale=0.4),
        "grouped": np.array(exporter_shape, np.int64),
        "back": np.array([1, 20, 12], np.int64),
        "ones": np.ones(4, np.float32),
        "zeros": np.zeros(4, np.float32),
        "gamma": _floats(20, 1) + 1,
        "beta": _floats(20, 1),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[5], pads=[2, 2]),
        helper.make_node("Reshape", ["c", "grouped"], ["g"]),
        helper.make_node("InstanceNormalization", ["g", "ones", "zeros"], ["n"], epsilon=1e-5),
        helper.make_node("Reshape", ["n", "back"], ["r"]),
        helper.make_node("Mul", ["r", "gamma"], ["m"]),
        helper.make_node("Add", ["m", "beta"], ["y"]),
    ]
    return typed_model(nodes, {"x": (F, [1, 3, 12])}, {"y": (F, [1, 20, 12])}, constants)


def test_group_norm_runs_like_onnxruntime() -> None:
    for grouped in ([1, 4, -1], [0, 4, -1]):
        module = like_onnxruntime_everywhere(group_norm(grouped), [_floats(1, 3, 12)])
        names = [op.name for op in module.walk() if op.name.startswith("nn.")]
        assert names.count("nn.layer_norm") == 1
        assert names.count("nn.mul") == names.count("nn.add") == 1  # the ones and zeros left out


def test_instance_norm_with_a_scale_and_bias_per_channel() -> None:
    """Over the 6 x 7 planes of a 20-channel convolution's result; sigmoid after it, whose
    value at 0 (0.5) would show in padding lanes that leaked."""
    constants = {
        "w": _floats(20, 3, 3, 3, scale=0.4),
        "scale": _floats(20) + 1,
        "bias": _floats(20),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("InstanceNormalization", ["c", "scale", "bias"], ["n"], epsilon=1e-3),
        helper.make_node("Sigmoid", ["n"], ["s"]),
        helper.make_node("Conv", ["s", "w2"], ["y"], kernel_shape=[1, 1]),
    ]
    constants["w2"] = _floats(8, 20, 1, 1, scale=0.3)
    model = typed_model(nodes, {"x": (F, [1, 3, 6, 7])}, {"y": (F, [1, 8, 6, 7])}, constants)
    module = like_onnxruntime_everywhere(model, [_floats(1, 3, 6, 7)])
    assert sum(isinstance(op, nn.LayerNormOp) for op in module.walk()) == 1


@pytest.mark.parametrize(
    ("shape", "scale", "expected"),
    [
        ([2, 4], np.ones(4), "the input must have rank 3 or more (N, C, spatial...), got [2, 4]"),
        ([2, 4, 3], np.ones(3), "input 1 has shape [3], not [4]"),
        ([2, 4, 3], np.ones((4, 1)), "input 1 has shape [4, 1], not [4]"),
    ],
    ids=["a matrix", "a neutral scale of the wrong length", "a neutral scale of rank 2"],
)
def test_what_instance_norm_cannot_be_is_refused_in_one_line(
    tmp_path: Path, shape: list[int], scale: np.ndarray, expected: str
) -> None:
    nodes = [helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], name="norm")]
    constants = {"s": scale.astype(np.float32), "b": np.zeros(4, np.float32)}
    model = typed_model(nodes, {"x": (F, shape)}, {"y": (F, shape)}, constants)
    done = tool_process("nnlayout-import", onnx_file(model)(tmp_path))
    assert_one_clean_error(done.returncode, done.stdout, done.stderr, expected)
