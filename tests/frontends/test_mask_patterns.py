"""Trilu, OneHot and Pad's wrap mode as torch's exporters write them (`tril`/`triu` of
activations, `F.one_hot` of run-time indices, circular padding), imported as compares,
wheres, slices and concats (frontends/onnx/masks.py, movement.py) and checked against
onnxruntime on every target, padding on and off: NaN and infinities outside a triangle
become 0 (a multiply would give NaN), negative and out-of-range one-hot indices, wrap pads
on both sides of both spatial axes of a 5-channel convolution's result; the refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnlayout.diagnostics import UserError
from nnlayout.frontends.onnx import import_model
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    check_against_onnxruntime,
    everywhere,
    like_onnxruntime_everywhere,
)

RNG = np.random.default_rng(31)


def _model(
    nodes: list,
    inits: dict[str, np.ndarray],
    shape: list[int],
    x_type: int = TensorProto.FLOAT,
    y_type: int = TensorProto.FLOAT,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "masks",
        [helper.make_tensor_value_info("x", x_type, shape)],
        [helper.make_tensor_value_info("y", y_type, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(("upper", "k"), [(0, None), (1, 1), (0, -2), (1, -1), (1, 9)])
def test_trilu_of_special_values(upper: int, k: int | None) -> None:
    """A triangle of [2, 5, 7] with NaN, infinities and -0 inside and outside it."""
    x = RNG.standard_normal((2, 5, 7)).astype(np.float32)
    x[0, 0, 4], x[0, 4, 0], x[1, 2, 2], x[1, 3, 6] = np.nan, np.inf, -np.inf, -0.0
    inits = {} if k is None else {"k": np.array(k, np.int64)}
    node = helper.make_node("Trilu", ["x"] + ([] if k is None else ["k"]), ["y"], upper=upper)
    like_onnxruntime_everywhere(_model([node], inits, [2, 5, 7]), [x])


def test_causal_mask_of_scores(tmp_path: Path) -> None:
    """scores.tril() after a product of run-time values, then a softmax."""
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["s"]),
        helper.make_node("Trilu", ["s"], ["t"], upper=0),
        helper.make_node("Softmax", ["t"], ["y"], axis=-1),
    ]
    inits = {"w": (RNG.standard_normal((6, 6)) / 3).astype(np.float32)}
    check_against_onnxruntime(_model(nodes, inits, [2, 6, 6]), tmp_path)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot_of_run_time_indices(axis: int) -> None:
    """Indices in range, negative ones (counted from the end) and out of range ones (all
    off), values [-1, 3]; int32 indices (which onnxruntime's OneHot does not take) give what
    the same indices in int64 give."""
    indices = np.array([[0, 3, -1, 5], [-5, 4, 2, -6]], np.int64)
    inits = {"depth": np.array(5, np.int64), "values": np.array([-1.0, 3.0], np.float32)}
    node = helper.make_node("OneHot", ["x", "depth", "values"], ["y"], axis=axis)
    wide = _model([node], inits, [2, 4], TensorProto.INT64)
    module = like_onnxruntime_everywhere(wide, [indices])
    (want,) = Interpreter(module).run([indices])
    narrow = import_model(_model([node], inits, [2, 4], TensorProto.INT32), inline_limit=64)
    for target, padding, _, (got,) in everywhere(narrow.module, [indices.astype(np.int32)]):
        np.testing.assert_array_equal(got, want, err_msg=f"{target} {padding}")


def test_one_hot_of_an_argmax_as_the_classic_exporter_writes_it() -> None:
    """F.one_hot(x.argmax(1), 8).float(): OneHot with int64 values, then a Cast."""
    inits = {"depth": np.array([8], np.int64), "values": np.array([0, 1], np.int64)}
    nodes = [
        helper.make_node("ArgMax", ["x"], ["a"], axis=1, keepdims=0),
        helper.make_node("OneHot", ["a", "depth", "values"], ["h"], axis=-1),
        helper.make_node("Cast", ["h"], ["y"], to=TensorProto.FLOAT),
    ]
    x = RNG.standard_normal((2, 8, 3)).astype(np.float32)
    like_onnxruntime_everywhere(_model(nodes, inits, [2, 8, 3]), [x])


@pytest.mark.parametrize(
    "pads", [[0, 0, 1, 2, 0, 0, 2, 1], [0, 0, 0, 3, 0, 0, 0, 0], [0, 0, 4, 0, 0, 0, 1, 6]]
)
def test_wrap_padding_before_a_convolution(pads: list[int], tmp_path: Path) -> None:
    """torch's circular padding (Pad mode 'wrap') of a 5-channel convolution's result."""
    inits = {
        "w1": (RNG.standard_normal((5, 3, 3, 3)) / 5).astype(np.float32),
        "w2": (RNG.standard_normal((4, 5, 3, 3)) / 5).astype(np.float32),
        "pads": np.array(pads, np.int64),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Pad", ["c", "pads"], ["p"], mode="wrap"),
        helper.make_node("Conv", ["p", "w2"], ["y"]),
    ]
    check_against_onnxruntime(_model(nodes, inits, [1, 3, 4, 6]), tmp_path)


@pytest.mark.parametrize(
    ("node", "inits", "x_type", "message"),
    [
        (
            helper.make_node("Pad", ["x", "pads"], ["y"], mode="wrap", name="n"),
            {"pads": np.array([0, 0, 0, 5, 0, 0, 0, 0], np.int64)},
            TensorProto.FLOAT,
            "Pad wraps 5 elements around an axis of 4",
        ),
        (
            helper.make_node("OneHot", ["x", "d", "v"], ["y"], name="n"),
            {"d": np.array(3.0, np.float32), "v": np.array([0.0, 1.0], np.float32)},
            TensorProto.FLOAT,
            "OneHot of f32 indices; nnlayout takes int64 and int32 ones",
        ),
    ],
)
def test_refusals_name_the_node(
    node: onnx.NodeProto, inits: dict, x_type: int, message: str
) -> None:
    with pytest.raises(UserError) as error:
        import_model(_model([node], inits, [1, 2, 3, 4], x_type))
    assert "'n'" in str(error.value) and message in str(error.value), error.value
