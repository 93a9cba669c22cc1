"""Reductions of masks and integers, and ReduceLogSumExp, as torch's exporters write them:
`(x > 0).any(1)` and `.all(1)` (the mask cast to int64, then ReduceSum and a comparison in
the classic export, ReduceMax/ReduceMin in the dynamo one), `mask.sum(-1)` of an int64
mask, and `x.logsumexp(1)`; checked against onnxruntime on every target, padding on and
off (a 5-channel convolution's result reduced over its channels), integers exactly: a sum
that wraps, -inf, +inf and NaN rows; the refusal of a mean of integers."""

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
)

RNG = np.random.default_rng(41)
I64, F32 = TensorProto.INT64, TensorProto.FLOAT


def _model(
    nodes: list, inits: dict, x: tuple[int, list[int]], y: int, opset: int = 17
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "reductions",
        [helper.make_tensor_value_info("x", x[0], x[1])],
        [helper.make_tensor_value_info("y", y, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _conv(inits: dict) -> onnx.NodeProto:
    inits["w"] = (RNG.standard_normal((5, 3, 3, 3)) / 3).astype(np.float32)
    return helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1])


def test_any_and_all_as_the_classic_exporter_writes_them(tmp_path: Path) -> None:
    """any: ReduceSum of the int64 mask > 0; all: not any of its negation."""
    inits = {"zero": np.array(0.0, np.float32), "none": np.array(0, np.int64)}
    inits["axes"] = np.array([1], np.int64)
    nodes = [
        _conv(inits),
        helper.make_node("Greater", ["c", "zero"], ["m"]),
        helper.make_node("Cast", ["m"], ["mi"], to=I64),
        helper.make_node("ReduceSum", ["mi", "axes"], ["s"], keepdims=0),
        helper.make_node("Greater", ["s", "none"], ["any"]),
        helper.make_node("Not", ["m"], ["n"]),
        helper.make_node("Cast", ["n"], ["ni"], to=I64),
        helper.make_node("ReduceSum", ["ni", "axes"], ["t"], keepdims=0),
        helper.make_node("Greater", ["t", "none"], ["some_not"]),
        helper.make_node("Not", ["some_not"], ["all"]),
        helper.make_node("Cast", ["any"], ["af"], to=F32),
        helper.make_node("Cast", ["all"], ["lf"], to=F32),
        helper.make_node("Add", ["af", "lf"], ["y"]),
    ]
    check_against_onnxruntime(_model(nodes, inits, (F32, [1, 3, 5, 6]), F32), tmp_path)


@pytest.mark.parametrize("op_type", ["ReduceMax", "ReduceMin"])
def test_any_and_all_as_the_dynamo_exporter_writes_them(op_type: str, tmp_path: Path) -> None:
    inits = {"zero": np.array(0.0, np.float32), "axes": np.array([1], np.int64)}
    nodes = [
        _conv(inits),
        helper.make_node("Greater", ["c", "zero"], ["m"]),
        helper.make_node("Cast", ["m"], ["mi"], to=I64),
        helper.make_node(op_type, ["mi", "axes"], ["r"], keepdims=0),
        helper.make_node("Cast", ["r"], ["b"], to=TensorProto.BOOL),
        helper.make_node("Cast", ["b"], ["y"], to=F32),
    ]
    model = _model(nodes, inits, (F32, [1, 3, 5, 6]), F32, 18)
    check_against_onnxruntime(model, tmp_path)


@pytest.mark.parametrize("op_type", ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"])
def test_integer_reductions_exactly(op_type: str) -> None:
    """Small integers (an int64 mask's count per row) as onnxruntime gives them; sums beyond
    float64's 2**53 exact, as numpy's int64 arithmetic gives them (onnxruntime's ReduceSum
    of int64 rounds there, through float64, and saturates past the range, which ONNX leaves
    undefined)."""
    x = RNG.integers(-5, 6, (3, 4, 6)).astype(np.int64)
    inits = {"axes": np.array([-1], np.int64)}
    node = helper.make_node(op_type, ["x", "axes"], ["y"], keepdims=0)
    model = _model([node], inits, (I64, [3, 4, 6]), I64, 18)
    like_onnxruntime_everywhere(model, [x])
    x[0, 0, :2], x[1, 1, :3] = [2**60, 3], [-(2**61), -1, -2]
    exact = {"ReduceSum": np.sum, "ReduceMax": np.max, "ReduceMin": np.min}
    if op_type in exact:
        module = import_model(model, inline_limit=64).module
        for target, padding, _, (got,) in everywhere(module, [x]):
            np.testing.assert_array_equal(got, exact[op_type](x, axis=-1), f"{target} {padding}")


def test_a_mean_of_integers_is_refused() -> None:
    node = helper.make_node("ReduceMean", ["x"], ["y"], axes=[1], name="mean")
    with pytest.raises(UserError) as error:
        import_model(_model([node], {}, (I64, [2, 3]), I64))
    message = str(error.value)
    assert "'mean'" in message and "kind 'mean' of i64 data" in message, message


@pytest.mark.parametrize("keepdims", [0, 1])
def test_log_sum_exp_over_channels(keepdims: int, tmp_path: Path) -> None:
    inits = {"axes": np.array([1], np.int64)}
    nodes = [
        _conv(inits),
        helper.make_node("ReduceLogSumExp", ["c", "axes"], ["y"], keepdims=keepdims),
    ]
    check_against_onnxruntime(_model(nodes, inits, (F32, [1, 3, 5, 6]), F32, 18), tmp_path)


def test_log_sum_exp_of_special_rows() -> None:
    """-inf everywhere gives -inf, a +inf +inf, NaN NaN, large magnitudes no overflow."""
    x = np.array(
        [[1, 2, 3], [-np.inf] * 3, [np.inf, 1, 2], [np.nan, 1, 2], [1000, 1000, 999]],
        np.float32,
    )
    node = helper.make_node("ReduceLogSumExp", ["x"], ["y"], axes=[1], keepdims=0)
    like_onnxruntime_everywhere(_model([node], {}, (F32, [5, 3]), F32), [x])


@pytest.mark.parametrize(("op_type", "expected"), [("ReduceMax", np.any), ("ReduceMin", np.all)])
def test_reductions_of_a_mask(op_type: str, expected: object) -> None:
    """ReduceMax and ReduceMin of bool data (opset 20): any and all, a mask again."""
    x = RNG.random((3, 4, 5)) < 0.3
    x[0] = False
    x[1] = True
    node = helper.make_node(op_type, ["x", "axes"], ["y"], keepdims=0)
    model = _model(
        [node],
        {"axes": np.array([2], np.int64)},
        (TensorProto.BOOL, [3, 4, 5]),
        TensorProto.BOOL,
        20,
    )
    module = import_model(model, inline_limit=64).module
    for target, padding, _, (got,) in everywhere(module, [x]):
        np.testing.assert_array_equal(got, expected(x, axis=2), f"{target} {padding}")  # type: ignore[operator]
        assert got.dtype == np.bool_
