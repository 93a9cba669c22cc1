"""ScatterND and ScatterElements at constant indices into data, or of updates, computed at run
time: BART's shift_tokens_right as both of torch's exporters write it (classic: ScatterND of the
ids shifted by one into zeros, then of the start token; dynamo: slice_scatter and
select_scatter as ScatterElements), and float rows and elements scattered. Against
onnxruntime on every target, padding on and off, interpreter and generated module (integers bit
for bit); run-time indices and reductions are refused in one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from nnlayout.tests.helpers import (
    assert_one_clean_error,
    like_onnxruntime_everywhere,
    onnx_file,
    tool_process,
    typed_model,
)

F, I64 = TensorProto.FLOAT, TensorProto.INT64
T, START, PAD = 7, 2, 1
RNG = np.random.default_rng(12)


def _ids() -> np.ndarray:
    ids = RNG.integers(3, 50, (1, T), dtype=np.int64)
    ids[0, 4] = -100  # a label to ignore: the shifted ids hold PAD there
    return ids


def shift_tokens_right(exporter: str) -> onnx.ModelProto:
    """shifted = zeros; shifted[:, 1:] = ids[:, :-1]; shifted[:, 0] = START; then -100 -> PAD."""
    constants = {
        "zeros": np.zeros((1, T), np.int64),
        "starts": np.array([0], np.int64),
        "ends": np.array([T - 1], np.int64),
        "axes": np.array([1], np.int64),
        "ignored": np.array(-100, np.int64),
        "pad": np.array(PAD, np.int64),
    }
    nodes = [helper.make_node("Slice", ["ids", "starts", "ends", "axes"], ["head"])]
    if exporter == "classic":
        constants["rows"] = np.array([[[0, j]] for j in range(1, T)], np.int64).reshape(1, T - 1, 2)
        constants["first"] = np.array([[[0, 0]]], np.int64).reshape(1, 1, 2)
        constants["start"] = np.full((1, 1), START, np.int64)
        nodes += [
            helper.make_node("ScatterND", ["zeros", "rows", "head"], ["shifted"]),
            helper.make_node("ScatterND", ["shifted", "first", "start"], ["started"]),
        ]
    else:
        constants["columns"] = np.arange(1, T, dtype=np.int64)[None]
        constants["column0"] = np.zeros((1, 1), np.int64)
        constants["start"] = np.full((1, 1), START, np.int64)
        nodes += [
            helper.make_node("ScatterElements", ["zeros", "columns", "head"], ["shifted"], axis=1),
            helper.make_node(
                "ScatterElements", ["shifted", "column0", "start"], ["started"], axis=1
            ),
        ]
    nodes += [
        helper.make_node("Equal", ["started", "ignored"], ["is_ignored"]),
        helper.make_node("Where", ["is_ignored", "pad", "started"], ["y"]),
    ]
    return typed_model(nodes, {"ids": (I64, [1, T])}, {"y": (I64, [1, T])}, constants)


@pytest.mark.parametrize("exporter", ["classic", "dynamo"])
def test_shift_tokens_right_is_onnxruntimes_exactly(exporter: str) -> None:
    ids = _ids()
    like_onnxruntime_everywhere(shift_tokens_right(exporter), [ids])
    want = np.concatenate([[[START]], ids[:, :-1]], axis=1)
    want[want == -100] = PAD
    assert want[0, 5] == PAD and want[0, 0] == START


def test_rows_of_floats_scattered_into_run_time_data() -> None:
    """Rows 3 and 0 of relu(x) [4, 3, 2] replaced by rows of another run-time value, row -2
    (2) by a third."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Sigmoid", ["u"], ["s"]),
        helper.make_node("ScatterND", ["r", "rows", "s"], ["y"]),
    ]
    constants = {"rows": np.array([[3], [0], [-2]], np.int64)}
    inputs = {"x": (F, [4, 3, 2]), "u": (F, [3, 3, 2])}
    model = typed_model(nodes, inputs, {"y": (F, [4, 3, 2])}, constants)
    x, u = RNG.standard_normal((4, 3, 2)), RNG.standard_normal((3, 3, 2))
    like_onnxruntime_everywhere(model, [x.astype(np.float32), u.astype(np.float32)])


def test_elements_of_floats_scattered_along_an_inner_axis() -> None:
    """ScatterElements on axis 1 of [2, 5, 3] with indices [2, 2, 3] (fewer than the data on
    axes 1 and 2), one negative."""
    nodes = [helper.make_node("ScatterElements", ["x", "where", "u"], ["y"], axis=1)]
    where = np.array([[[4, 0, 1], [2, -1, 3]], [[0, 0, 0], [1, 2, 4]]], np.int64)
    inputs = {"x": (F, [2, 5, 3]), "u": (F, [2, 2, 3])}
    model = typed_model(nodes, inputs, {"y": (F, [2, 5, 3])}, {"where": where})
    x, u = RNG.standard_normal((2, 5, 3)), RNG.standard_normal((2, 2, 3))
    like_onnxruntime_everywhere(model, [x.astype(np.float32), u.astype(np.float32)])


@pytest.mark.parametrize(
    ("node", "constants", "expected"),
    [
        (
            helper.make_node("ScatterND", ["x", "at", "u"], ["y"], name="s"),
            {},
            "ScatterND indices 'at' must be a constant; they are computed at run time",
        ),
        (
            helper.make_node("ScatterND", ["x", "at", "u"], ["y"], name="s", reduction="add"),
            {"at": np.array([[1]], np.int64)},
            "ScatterND with reduction 'add' is not supported",
        ),
        (
            helper.make_node("ScatterElements", ["x", "at", "u"], ["y"], name="s", axis=0),
            {"at": np.array([[5, 0, 0]], np.int64)},
            "ScatterElements indices out of range for the axes [4]",
        ),
    ],
    ids=["run-time indices", "reduction", "out of range"],
)
def test_scatters_beyond_constant_indices_are_refused_in_one_line(
    tmp_path: Path, node: onnx.NodeProto, constants: dict, expected: str
) -> None:
    inputs = {"x": (F, [4, 3]), "u": (F, [1, 3])}
    if not constants:
        inputs["at"] = (I64, [1, 1])
    model = typed_model([node], inputs, {"y": (F, [4, 3])}, constants)
    done = tool_process("nnlayout-import", onnx_file(model)(tmp_path))
    assert_one_clean_error(done.returncode, done.stdout, done.stderr, expected)


def test_a_bool_mask_scattered_into() -> None:
    """An attention mask with columns 1 and 3 set false by ScatterElements of a run-time
    bool row: nn.where selects masks as it selects numbers."""
    nodes = [
        helper.make_node("Not", ["m"], ["n"]),
        helper.make_node("ScatterElements", ["n", "columns", "off"], ["y"], axis=1),
    ]
    constants = {"columns": np.array([[1, -2]], np.int64)}
    inputs = {"m": (TensorProto.BOOL, [2, 5]), "off": (TensorProto.BOOL, [1, 2])}
    model = typed_model(nodes, inputs, {"y": (TensorProto.BOOL, [2, 5])}, constants)
    mask = RNG.integers(0, 2, (2, 5)).astype(np.bool_)
    like_onnxruntime_everywhere(model, [mask, np.array([[False, True]])])
