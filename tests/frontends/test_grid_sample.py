"""GridSample (torch's `F.grid_sample`) as torch's exporters write it (opset 16's mode names
from the classic exporter at opset 17, opset 20's from newer ones), imported as
`nn.grid_sample` and checked against onnxruntime on every target, padding on and off: every
mode, padding mode and align_corners, after a convolution on 5 channels (padded in every
blocked layout), grid points inside and far outside the image; grid points on the ties that
float32 and float64 round apart; a non-finite point; the refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnlayout.diagnostics import UserError
from nnlayout.frontends.onnx import import_model
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import check_against_onnxruntime, like_onnxruntime_everywhere

OPSET_16_MODES = {"nearest": "nearest", "linear": "bilinear", "cubic": "bicubic"}


def sampler(
    mode: str, padding: str, align: int, opset: int, image: list[int], grid: list[int]
) -> onnx.ModelProto:
    """x -> (a 3x3 convolution keeping its channels) -> GridSample(., grid)."""
    w = np.random.default_rng(5).standard_normal((image[1], image[1], 3, 3)) / 5
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node(
            "GridSample",
            ["c", "grid"],
            ["y"],
            mode=OPSET_16_MODES[mode] if opset < 20 else mode,
            padding_mode=padding,
            align_corners=align,
        ),
    ]
    graph = helper.make_graph(
        nodes,
        "grid_sample",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, image),
            helper.make_tensor_value_info("grid", TensorProto.FLOAT, grid),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w.astype(np.float32), "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_grid_sample_after_a_convolution(
    mode: str, padding: str, align: int, opset: int, tmp_path: Path
) -> None:
    """Standard-normal grid points: a third of them outside [-1, 1], where the padding
    mode decides."""
    model = sampler(mode, padding, align, opset, [2, 5, 6, 7], [2, 4, 9, 2])
    module = check_against_onnxruntime(model, tmp_path, seed=opset + align)
    assert [op.name for op in module.walk()].count("nn.grid_sample") == 1


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_points_on_ties_pick_onnxruntime_taps(mode: str) -> None:
    """Coordinates computed in float32 as onnxruntime does: -0.2 gives y = 1.5 (rounded up
    to 2) in float32 and 1.4999999925 (down to 1) in float64; -1 and 1 fall on the image's
    edges; points a whole pixel apart land on integers."""
    model = sampler(mode, "border", 0, 20, [1, 3, 5, 6], [1, 2, 4, 2])
    x = np.random.default_rng(1).standard_normal((1, 3, 5, 6)).astype(np.float32)
    grid = np.array(
        [
            [[1 / 6, -0.2], [-1, 1], [1, -1], [0.2, 0.6]],
            [[0, 0], [-0.6, 0.2], [2 / 3, 0.6], [-1 / 3, -1]],
        ],
        np.float32,
    )[None]
    like_onnxruntime_everywhere(model, [x, grid])


def test_a_point_that_is_not_finite_gives_nan() -> None:
    """onnxruntime's result there is undefined behaviour (a NaN cast to an integer); ours is
    NaN, the other points unchanged."""
    model = sampler("linear", "zeros", 0, 17, [1, 2, 4, 4], [1, 1, 3, 2])
    module = import_model(model, inline_limit=1 << 20).module
    x = np.ones((1, 2, 4, 4), np.float32)
    grid = np.array([[[[np.nan, 0], [0, np.inf], [0, 0]]]], np.float32)
    (y,) = Interpreter(module).run([x, grid])
    assert np.isnan(y[..., :2]).all() and np.isfinite(y[..., 2]).all()


@pytest.mark.parametrize(
    ("attrs", "image", "message"),
    [
        ({"mode": "lanczos"}, [1, 2, 4, 4], "GridSample mode 'lanczos' is not supported"),
        ({"padding_mode": "wrap"}, [1, 2, 4, 4], "GridSample padding_mode 'wrap'"),
        ({}, [1, 2, 3, 4, 4], "GridSample of rank-5 data; nnlayout samples NCHW images"),
    ],
)
def test_refusals_name_the_node(attrs: dict, image: list[int], message: str) -> None:
    grid = [1, 2, 2, 2, len(image) - 2][: len(image) - 1] + [len(image) - 2]
    node = helper.make_node("GridSample", ["x", "g"], ["y"], name="gs", **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, image),
            helper.make_tensor_value_info("g", TensorProto.FLOAT, grid),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    with pytest.raises(UserError) as error:
        import_model(model)
    assert "gs" in str(error.value) and message in str(error.value), error.value
