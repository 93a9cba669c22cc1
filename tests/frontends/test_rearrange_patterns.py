"""Tile, DepthToSpace and SpaceToDepth as torch's exporters write them (`x.repeat`, the
classic export of `repeat_interleave`, `F.pixel_shuffle` as ESPCN upsamples with it),
imported as reshapes, expands and transposes (frontends/onnx/rearrange.py) and checked
against onnxruntime on every target, padding on and off, between convolutions whose channel
counts (5, 12, 3) pad in every blocked layout; and their refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnlayout.diagnostics import UserError
from nnlayout.frontends.onnx import import_model
from nnlayout.tests.helpers import check_against_onnxruntime

RNG = np.random.default_rng(9)


def _conv(name: str, source: str, cin: int, cout: int, inits: list) -> onnx.NodeProto:
    w = (RNG.standard_normal((cout, cin, 3, 3)) / np.sqrt(9 * cin)).astype(np.float32)
    inits.append(numpy_helper.from_array(w, f"{name}.w"))
    return helper.make_node("Conv", [source, f"{name}.w"], [name], pads=[1, 1, 1, 1])


def _model(nodes: list, inits: list, shape: list[int], opset: int = 17) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "rearrange",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("opset", [17, 18])
@pytest.mark.parametrize("mode", ["CRD", "DCR"])
def test_espcn_upsampling(mode: str, opset: int, tmp_path: Path) -> None:
    """ESPCN: conv -> tanh -> conv to 3 * 2 * 2 channels -> DepthToSpace(2) -> 3 channels
    at twice the size (torch writes CRD), then a convolution reading it."""
    inits: list = []
    nodes = [
        _conv("c1", "x", 5, 8, inits),
        helper.make_node("Tanh", ["c1"], ["t"]),
        _conv("c2", "t", 8, 12, inits),
        helper.make_node("DepthToSpace", ["c2"], ["d"], blocksize=2, mode=mode),
        _conv("y", "d", 3, 5, inits),
    ]
    check_against_onnxruntime(_model(nodes, inits, [1, 5, 6, 7], opset), tmp_path)


@pytest.mark.parametrize("mode", [None, "CRD"])
def test_space_to_depth_between_convolutions(mode: str | None, tmp_path: Path) -> None:
    """The default (DCR) and, as newer opsets allow, CRD."""
    inits: list = []
    attrs = {} if mode is None else {"mode": mode}
    nodes = [
        _conv("c", "x", 3, 5, inits),
        helper.make_node("SpaceToDepth", ["c"], ["s"], blocksize=2, **attrs),
        _conv("y", "s", 20, 6, inits),
    ]
    model = _model(nodes, inits, [2, 3, 8, 6], 17 if mode is None else 28)
    # SpaceToDepth has modes from opset 28, which onnxruntime does not run yet: the CRD
    # model's reference is ONNX's definition written out
    reference = None if mode is None else _crd_reference(nodes, inits)
    check_against_onnxruntime(model, tmp_path, reference=reference)


def _crd_reference(nodes: list, inits: list) -> onnx.ModelProto:
    """SpaceToDepth CRD written as ONNX's definition: reshape, transpose, reshape."""
    shapes = [
        numpy_helper.from_array(np.array([2, 5, 4, 2, 3, 2], np.int64), "six"),
        numpy_helper.from_array(np.array([2, 20, 4, 3], np.int64), "four"),
    ]
    rewritten = [
        nodes[0],
        helper.make_node("Reshape", ["c", "six"], ["r6"]),
        helper.make_node("Transpose", ["r6"], ["t6"], perm=[0, 1, 3, 5, 2, 4]),
        helper.make_node("Reshape", ["t6", "four"], ["s"]),
        nodes[2],
    ]
    return _model(rewritten, inits + shapes, [2, 3, 8, 6])


@pytest.mark.parametrize(
    "repeats",
    [[1, 2, 1, 1], [2, 1, 3, 1], [1, 1, 1, 1], [1, 1, 2, 2]],
    ids=["channels", "batch and height", "none", "space"],
)
def test_tile_between_convolutions(repeats: list[int], tmp_path: Path) -> None:
    inits = [numpy_helper.from_array(np.array(repeats, np.int64), "repeats")]
    nodes = [
        _conv("c", "x", 3, 5, inits),
        helper.make_node("Tile", ["c", "repeats"], ["t"]),
        _conv("y", "t", 5 * repeats[1], 4, inits),
    ]
    module = check_against_onnxruntime(_model(nodes, inits, [1, 3, 5, 6]), tmp_path)
    expands = [op.name for op in module.walk()].count("nn.expand")
    assert expands == (0 if repeats == [1, 1, 1, 1] else 1)


def test_repeat_interleave_as_the_classic_exporter_writes_it(tmp_path: Path) -> None:
    """x.repeat_interleave(2, dim=1): Unsqueeze at 2, Tile [1, 1, 2, 1, 1], Reshape."""
    inits = [
        numpy_helper.from_array(np.array([2], np.int64), "axes"),
        numpy_helper.from_array(np.array([1, 1, 2, 1, 1], np.int64), "repeats"),
        numpy_helper.from_array(np.array([1, 10, 4, 6], np.int64), "shape"),
    ]
    nodes = [
        _conv("c", "x", 3, 5, inits),
        helper.make_node("Unsqueeze", ["c", "axes"], ["u"]),
        helper.make_node("Tile", ["u", "repeats"], ["t"]),
        helper.make_node("Reshape", ["t", "shape"], ["r"]),
        _conv("y", "r", 10, 4, inits),
    ]
    check_against_onnxruntime(_model(nodes, inits, [1, 3, 4, 6]), tmp_path)


@pytest.mark.parametrize(
    ("node", "inits", "message"),
    [
        (
            helper.make_node("Tile", ["x", "r"], ["y"], name="n"),
            {"r": np.array([1, 0, 1, 1], np.int64)},
            "Tile's repeats [1, 0, 1, 1] must be one count of at least 1 per axis",
        ),
        (
            helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=3, name="n"),
            {},
            "DepthToSpace of 4 channels by blocks of 3 x 3",
        ),
        (
            helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=4, name="n"),
            {},
            "SpaceToDepth of a 6 x 6 image by blocks of 4 x 4",
        ),
    ],
)
def test_refusals_name_the_node(node: onnx.NodeProto, inits: dict, message: str) -> None:
    model = _model([node], [numpy_helper.from_array(v, k) for k, v in inits.items()], [1, 4, 6, 6])
    with pytest.raises(UserError) as error:
        import_model(model)
    assert "'n'" in str(error.value) and message in str(error.value), error.value
