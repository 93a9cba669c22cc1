"""ArgMax, ArgMin and TopK as torch's exporters write them (`argmax`, `max(dim)[1]`,
`topk`, `sort`), imported as `nn.argmax`, `nn.argmin` and `nn.topk` (values gathered at
its indices) and checked against onnxruntime on every target, padding on and off: over
the channels of a convolution's 5-channel result (where a blocked layout's padding lanes
must never be an answer), over the last axis, keepdims 0 and 1, select_last_index, and
onnxruntime's ties, NaN, infinities and signed zeros; indices compared exactly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnlayout.diagnostics import UserError
from nnlayout.frontends.onnx import import_model
from nnlayout.tests.helpers import (
    check_against_onnxruntime,
    everywhere,
    like_onnxruntime_everywhere,
    onnxruntime_outputs,
)

RNG = np.random.default_rng(21)
NAN, INF = np.nan, np.inf
# Rows onnxruntime answers in its own way: NaN first or later, ties, -inf rows, -0 and 0.
SPECIAL = np.array(
    [
        [1, NAN, 3, 2, 3],
        [NAN, 1, 2, 3, 0],
        [3, 1, 3, 2, 1],
        [-INF, -INF, -INF, -INF, -INF],
        [1, 2, NAN, NAN, 2],
        [NAN, NAN, NAN, NAN, NAN],
        [2, INF, NAN, INF, -INF],
        [-0.0, 0.0, 0.0, -0.0, -0.0],
    ],
    np.float32,
)


def _model(
    nodes: list, inits: list, shape: list[int], outputs: list[tuple[str, int]], opset: int = 17
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "selection",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info(name, t, None) for name, t in outputs],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _conv_then(node: onnx.NodeProto, outputs: list[tuple[str, int]], opset: int) -> onnx.ModelProto:
    """x [1, 3, 5, 6] -> a 3x3 convolution to 5 channels -> `node` (reading "c")."""
    w = (RNG.standard_normal((5, 3, 3, 3)) / 5).astype(np.float32)
    conv = helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1])
    inits = [numpy_helper.from_array(w, "w")]
    return _model([conv, node], inits, [1, 3, 5, 6], outputs, opset)


@pytest.mark.parametrize("opset", [17, 18])
@pytest.mark.parametrize(
    ("op_type", "attrs"),
    [
        ("ArgMax", {"axis": 1, "keepdims": 0}),  # a segmentation net's class per pixel
        ("ArgMax", {"axis": 1, "keepdims": 1, "select_last_index": 1}),
        ("ArgMin", {"axis": -1, "keepdims": 0}),
        ("ArgMax", {"axis": 3, "keepdims": 1}),
    ],
)
def test_arg_extremum_after_a_convolution(
    op_type: str, attrs: dict, opset: int, tmp_path: Path
) -> None:
    node = helper.make_node(op_type, ["c"], ["y"], **attrs)
    check_against_onnxruntime(_conv_then(node, [("y", TensorProto.INT64)], opset), tmp_path)


@pytest.mark.parametrize("select_last", [0, 1])
@pytest.mark.parametrize("op_type", ["ArgMax", "ArgMin"])
def test_arg_extremum_of_special_values(op_type: str, select_last: int) -> None:
    node = helper.make_node(
        op_type, ["x"], ["y"], axis=1, keepdims=0, select_last_index=select_last
    )
    model = _model([node], [], list(SPECIAL.shape), [("y", TensorProto.INT64)])
    like_onnxruntime_everywhere(model, [SPECIAL])


@pytest.mark.parametrize(
    ("k", "attrs", "opset"),
    [
        (3, {"axis": 1}, 17),  # the 3 largest channels of each pixel
        (5, {"axis": 1, "largest": 0}, 18),  # sort ascending: torch's sort()
        (1, {"axis": -1}, 17),
        (6, {"axis": -1, "largest": 1, "sorted": 1}, 18),  # sort(descending=True)
    ],
)
def test_topk_after_a_convolution(k: int, attrs: dict, opset: int, tmp_path: Path) -> None:
    node = helper.make_node("TopK", ["c", "k"], ["values", "indices"], **attrs)
    model = _conv_then(node, [("values", TensorProto.FLOAT), ("indices", TensorProto.INT64)], opset)
    model.graph.initializer.append(numpy_helper.from_array(np.array([k], np.int64), "k"))
    check_against_onnxruntime(model, tmp_path)


@pytest.mark.parametrize("largest", [1, 0])
def test_topk_of_special_values(largest: int) -> None:
    """NaN above every number, ties by index, -0 equal to 0; values and indices exactly as
    onnxruntime gives them."""
    k = numpy_helper.from_array(np.array([4], np.int64), "k")
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=largest)
    outputs = [("v", TensorProto.FLOAT), ("i", TensorProto.INT64)]
    model = _model([node], [k], list(SPECIAL.shape), outputs)
    want = onnxruntime_outputs(model, [SPECIAL])
    module = import_model(model, inline_limit=1 << 20).module
    for target, padding, _, got in everywhere(module, [SPECIAL]):
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b, err_msg=f"{target} {padding}")
            assert a.dtype == b.dtype


def test_topk_indices_only() -> None:
    """argsort of the top 2 (the values unread): no gather is emitted."""
    k = numpy_helper.from_array(np.array([2], np.int64), "k")
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=0)
    model = _model([node], [k], [6], [("i", TensorProto.INT64)])
    module = like_onnxruntime_everywhere(model, [RNG.standard_normal(6).astype(np.float32)])
    assert "nn.gather" not in {op.name for op in module.walk()}


def test_run_time_k_is_refused() -> None:
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], name="top")
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5]),
            helper.make_tensor_value_info("k", TensorProto.INT64, [1]),
        ],
        [
            helper.make_tensor_value_info("v", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("i", TensorProto.INT64, None),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(UserError) as error:
        import_model(model)
    assert "'top'" in str(error.value) and "TopK's K 'k' must be a constant" in str(error.value)
