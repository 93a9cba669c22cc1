"""Resize in cubic mode (torch's bicubic `F.interpolate`) as torch's exporters write it,
imported as products with constant interpolation matrices (frontends/onnx/resize_cubic.py)
and checked against onnxruntime on every target, padding on and off: up and down, by scales
and by sizes, every coordinate transformation, `exclude_outside`, another `cubic_coeff_a`,
and the border values the clamped taps read (a large value at the edge)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.resize_cubic import interpolation_matrix
from nnlayout.tests.helpers import check_against_onnxruntime, like_onnxruntime_everywhere

RNG = np.random.default_rng(3)


def resize_model(
    shape: list[int],
    opset: int = 17,
    scales: list[float] | None = None,
    sizes: list[int] | None = None,
    conv: bool = True,
    **attrs: object,
) -> onnx.ModelProto:
    """x -> (a 5 -> 5 channel convolution) -> Resize cubic, the classic exporter's form
    (roi and scales as inputs, empty where sizes are given); `attrs` beyond the mode."""
    inits: dict[str, np.ndarray] = {}
    nodes, source = [], "x"
    if conv:
        inits["w"] = (RNG.standard_normal((shape[1], shape[1], 3, 3)) / 6).astype(np.float32)
        nodes.append(helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]))
        source = "c"
    inputs = [source, "", "scales"]
    inits["scales"] = np.array(scales or [], np.float32)
    if sizes is not None:
        inits["sizes"] = np.array(sizes, np.int64)
        inputs = [source, "", "", "sizes"]
    attributes = {"mode": "cubic", "cubic_coeff_a": -0.75, "nearest_mode": "floor"} | attrs
    nodes.append(helper.make_node("Resize", inputs, ["y"], **attributes))
    graph = helper.make_graph(
        nodes,
        "cubic",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, n) for n, v in inits.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("opset", [17, 18])
@pytest.mark.parametrize(
    "coordinates",
    ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "half_pixel_symmetric"],
)
def test_bicubic_upsampling_after_a_convolution(
    opset: int, coordinates: str, tmp_path: Path
) -> None:
    """torch's bicubic x2 (half_pixel; align_corners=True writes align_corners) on 5
    channels, padded in every blocked layout."""
    model = resize_model(
        [1, 5, 6, 7], opset, scales=[1, 1, 2, 2], coordinate_transformation_mode=coordinates
    )
    module = check_against_onnxruntime(model, tmp_path)
    assert [op.name for op in module.walk()].count("nn.matmul") == 2


@pytest.mark.parametrize(
    ("sizes", "attrs"),
    [
        ([1, 5, 4, 3], {}),  # down by sizes, both axes
        ([1, 5, 6, 11], {"exclude_outside": 1}),  # only W, its edge taps renormalised
        ([1, 5, 13, 7], {"cubic_coeff_a": -0.5}),  # only H, TensorFlow's coefficient
    ],
)
def test_cubic_resize_by_sizes(sizes: list[int], attrs: dict, tmp_path: Path) -> None:
    model = resize_model([1, 5, 6, 7], 18, sizes=sizes, **attrs)
    module = check_against_onnxruntime(model, tmp_path)
    changed = [a != b for a, b in zip(sizes[2:], [6, 7], strict=True)]
    assert [op.name for op in module.walk()].count("nn.matmul") == sum(changed)


def test_edges_read_the_border_value() -> None:
    """A large value in the corner: the taps beyond the border read it (clamped), as
    onnxruntime's do; the output's corner overshoots it (the cubic kernel's negative lobe)."""
    x = np.zeros((1, 2, 4, 4), np.float32)
    x[..., 0, 0] = 1000.0
    x[:, 1] = -x[:, 0]
    model = resize_model([1, 2, 4, 4], scales=[1, 1, 2.5, 2.5], conv=False)
    like_onnxruntime_everywhere(model, [x])


def test_a_resize_that_changes_nothing_is_the_input() -> None:
    """Scales of 1 with half-pixel coordinates: the identity, no product."""
    x = RNG.standard_normal((1, 3, 4, 5)).astype(np.float32)
    model = resize_model([1, 3, 4, 5], scales=[1, 1, 1, 1], conv=False)
    module = like_onnxruntime_everywhere(model, [x])
    assert not any(isinstance(op, nn.MatmulOp) for op in module.walk())


def test_the_interpolation_matrix_rows_sum_to_one() -> None:
    """The cubic kernel is a partition of unity: every row sums to 1, with taps clamped or
    excluded; an integer source coordinate reads one input (weights 0, 1, 0, 0)."""
    for exclude in (False, True):
        matrix = interpolation_matrix(5, 11, 11 / 5, "half_pixel", -0.75, exclude)
        np.testing.assert_allclose(matrix.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    same = interpolation_matrix(6, 3, 0.5, "asymmetric", -0.75, False)
    np.testing.assert_array_equal(same, np.eye(6)[::2])
