"""benchmarks/op_kinds.py: how ops are put in kinds on both sides, onnxruntime's profile
split into its runs, and a small inception-like block end to end (its concat in place on
`onednn-nchw16c`: no Concat on our side, onnxruntime's on its side)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from nnlayout.benchmarks import op_kinds


def test_conv_kinds() -> None:
    assert op_kinds.conv_kind([64, 3, 7, 7]) == "stem conv"
    assert op_kinds.conv_kind([64, 1, 7, 7]) == "stem conv"  # a stem split per channel
    assert op_kinds.conv_kind([64, 16, 1, 1]) == "conv 1x1"
    assert op_kinds.conv_kind([64, 16, 3, 1]) == "conv kxk"
    assert op_kinds.conv_kind([32, 1, 3, 3], groups=32) == "conv depthwise"
    assert op_kinds.conv_kind([64, 8, 3, 3], groups=4) == "conv grouped"
    assert op_kinds.conv_kind([64, 16, 1, 1], pixel=True) == "conv 1x1 (1 pixel)"
    assert op_kinds.conv_kind([64, 1, 1, 1], groups=64) == "stem conv"  # 1x1: no window


def test_their_conv_kinds() -> None:
    def kind(x: list[int], weights: list[int]) -> str:
        shapes = [{"float": x}, {"float": weights}]
        return op_kinds.their_kind({"args": {"op_name": "Conv", "input_type_shape": shapes}})

    assert kind([1, 96, 56, 56], [96, 1, 3, 3]) == "conv depthwise"
    assert kind([1, 1, 224, 224], [32, 1, 3, 3]) == "stem conv"  # one channel: not grouped
    assert kind([1, 96, 1, 1], [24, 96, 1, 1]) == "conv 1x1 (1 pixel)"
    assert kind([1, 96, 2, 1], [24, 96, 1, 1]) == "conv 1x1"


def test_their_quantized_convolutions_by_node_name() -> None:
    """onnxruntime's QLinearConv events lack the prepacked weights: their kinds come from
    the optimised graph, by node name."""
    weights = [
        numpy_helper.from_array(np.zeros(shape, np.int8), name)
        for name, shape in (("w1", (16, 1, 3, 3)), ("w2", (8, 16, 1, 1)))
    ]
    qlinear = ["x", "xs", "xz", "", "ws", "wz", "ys", "yz"]
    nodes = [
        helper.make_node("QLinearConv", [*qlinear[:3], "w1", *qlinear[4:]], ["a"], "dw", group=16),
        helper.make_node("QLinearConv", [*qlinear[:3], "w2", *qlinear[4:]], ["b"], "pw"),
    ]
    graph = helper.make_graph(nodes, "g", [], [], weights)
    kinds = op_kinds.their_conv_kinds(helper.make_model(graph))
    assert kinds == {"dw": "conv depthwise", "pw": "conv 1x1"}
    event = {"name": "pw_kernel_time", "args": {"op_name": "QLinearConv"}}
    assert op_kinds.their_kind(event, kinds) == "conv 1x1"
    pool = {"name": "p_kernel_time", "args": {"op_name": "NhwcMaxPool"}}
    assert op_kinds.their_kind(pool, kinds) == "MaxPool"


def _node(name: str, op: str, ts: int, dur: int, weights: list[int] | None = None) -> dict:
    shapes = [{"float": [1, 16, 8, 8]}] + ([{"float": weights}] if weights else [])
    return {
        "cat": "Node",
        "name": f"{name}_kernel_time",
        "ts": ts,
        "dur": dur,
        "args": {"op_name": op, "input_type_shape": shapes},
    }


def test_their_runs_split_by_model_run(tmp_path: Path) -> None:
    events = [
        {"cat": "Session", "name": "model_run", "ts": 0, "dur": 100},
        _node("a", "Conv", 10, 40, [16, 16, 1, 1]),
        _node("b", "ReorderOutput", 60, 5),
        {"cat": "Session", "name": "model_run", "ts": 200, "dur": 100},
        _node("c", "Conv", 210, 30, [16, 3, 3, 3]),
        _node("d", "Concat", 250, 7),
    ]
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(events), encoding="utf-8")
    assert op_kinds.their_runs(str(path)) == [
        {"conv 1x1": 0.04, "reorder": 0.005},
        {"stem conv": 0.03, "Concat": 0.007},
    ]


def _inception_block(path: Path) -> None:
    rng = np.random.default_rng(0)
    weights = {
        "w0": rng.standard_normal((16, 3, 3, 3)),
        "w1": rng.standard_normal((16, 16, 1, 1)),
        "w2": rng.standard_normal((32, 16, 3, 3)),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["s"], pads=[1] * 4),
        helper.make_node("Relu", ["s"], ["sr"]),
        helper.make_node("MaxPool", ["sr"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p", "w1"], ["a"]),
        helper.make_node("Relu", ["a"], ["ar"]),
        helper.make_node("Conv", ["p", "w2"], ["b"], pads=[1] * 4),
        helper.make_node("Relu", ["b"], ["br"]),
        helper.make_node("Concat", ["ar", "br"], ["y"], axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "block",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 48, 8, 8])],
        [numpy_helper.from_array(w.astype(np.float32), n) for n, w in weights.items()],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


@pytest.mark.onednn_avx512  # nChw16c with the concat in place: oneDNN's avx512_core code
def test_small_block_end_to_end(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "block.onnx"
    _inception_block(path)
    assert op_kinds.main([str(path), "--target", "onednn-nchw16c", "--runs", "3"]) == 0
    rows = {
        cells[0]: (float(cells[1]), float(cells[2]))
        for line in capfd.readouterr().out.splitlines()
        if line.startswith("| ") and not line.startswith("| kind")
        for cells in [[c.strip() for c in line.strip("|").split("|")]]
    }
    for kind in ("stem conv", "conv 1x1", "conv kxk", "MaxPool"):
        assert rows[kind][0] > 0 and rows[kind][1] > 0, kind
    assert rows["Concat"][0] == 0 and rows["Concat"][1] > 0  # ours in place


def test_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert op_kinds.main([str(tmp_path / "missing.onnx")]) == 1
    assert "no such file" in capsys.readouterr().err
