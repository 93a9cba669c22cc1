"""benchmarks/float64_reference: a model evaluated in float64, the exact result the float32
runtimes are judged against by torchvision_zoo --exact. Its vectorised Conv, MaxPool and
Resize are checked against onnx's own implementations (the oracle) on the attributes the
torchvision exports use and a few more; the float64 rewrite against hand-computed values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from onnx.reference.ops.op_conv import Conv as OnnxConv
from onnx.reference.ops.op_max_pool import MaxPool as OnnxMaxPool
from onnx.reference.ops.op_resize import Resize as OnnxResize

from nnlayout.benchmarks import float64_reference
from nnlayout.benchmarks.float64_reference import OPERATORS, float64_model, float64_outputs
from nnlayout.tests.helpers import onnx_model

RNG = np.random.default_rng(0)


def _x(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


CONVS = {
    "grouped, strided, dilated, uneven pads": (
        {"group": 2, "strides": [2, 1], "dilations": [2, 3], "pads": [1, 2, 3, 0]},
        _x(2, 4, 11, 13),
        _x(6, 2, 3, 2),
    ),
    "stem 7x7 stride 2": ({"pads": [3] * 4, "strides": [2, 2]}, _x(1, 3, 20, 20), _x(5, 3, 7, 7)),
    "depthwise": ({"group": 6, "pads": [1] * 4}, _x(1, 6, 9, 9), _x(6, 1, 3, 3)),
    "dilated 3x3 (fcn's layer4)": (
        {"pads": [4] * 4, "dilations": [4, 4]},
        _x(1, 8, 12, 12),
        _x(3, 8, 3, 3),
    ),
    "1x1 no bias": ({}, _x(1, 5, 4, 6), _x(7, 5, 1, 1)),
}
RESIZES = [
    (mode, how)
    for mode in ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric")
    for how in ("sizes", "scales")
]


def _single(node: onnx.NodeProto, feeds: dict[str, np.ndarray]) -> onnx.ModelProto:
    return onnx_model(
        [node], {n: list(v.shape) for n, v in feeds.items()}, list(node.output), opset=19
    )


def _both(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """onnx's own result and the vectorised one, of `model`'s first output."""
    want = ReferenceEvaluator(model).run(None, feeds)[0]
    got = ReferenceEvaluator(model, new_ops=OPERATORS).run(None, feeds)[0]
    return want, got


def _no_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """onnx's implementations fail if called: the vectorised ones must do the work."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("fell back to onnx's implementation")

    for cls in (OnnxConv, OnnxMaxPool, OnnxResize):
        monkeypatch.setattr(cls, "_run", refuse)


@pytest.mark.parametrize("case", list(CONVS))
def test_conv_matches_onnx(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    attributes, x, w = CONVS[case]
    b = RNG.standard_normal(w.shape[0])
    inputs = ["x", "w", "b"] if case != "1x1 no bias" else ["x", "w"]
    feeds = dict(zip(inputs, (x, w, b), strict=False))
    model = _single(helper.make_node("Conv", inputs, ["y"], **attributes), feeds)
    want = ReferenceEvaluator(model).run(None, feeds)[0]
    _no_fallback(monkeypatch)
    got = ReferenceEvaluator(model, new_ops=OPERATORS).run(None, feeds)[0]
    assert got.dtype == np.float64 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.abs(want).max())


def test_maxpool_matches_onnx(monkeypatch: pytest.MonkeyPatch) -> None:
    feeds = {"x": _x(1, 3, 9, 10) - 5.0}  # all negative: the padding must not win
    node = helper.make_node(
        "MaxPool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1] * 4, strides=[2, 2]
    )
    model = _single(node, feeds)
    want = ReferenceEvaluator(model).run(None, feeds)[0]
    _no_fallback(monkeypatch)
    got = ReferenceEvaluator(model, new_ops=OPERATORS).run(None, feeds)[0]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("mode", "how"), RESIZES)
def test_linear_resize_matches_onnx(mode: str, how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    feeds = {"x": _x(1, 2, 5, 7)}
    if how == "sizes":
        feeds["s"] = np.array([1, 2, 11, 3], dtype=np.int64)
        inputs = ["x", "", "", "s"]
    else:
        feeds["s"] = np.array([1.0, 1.0, 2.5, 0.6])
        inputs = ["x", "", "s"]
    node = helper.make_node(
        "Resize", inputs, ["y"], mode="linear", coordinate_transformation_mode=mode
    )
    model = _single(node, feeds)
    want = ReferenceEvaluator(model).run(None, feeds)[0]
    _no_fallback(monkeypatch)
    got = ReferenceEvaluator(model, new_ops=OPERATORS).run(None, feeds)[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)


def test_other_attributes_fall_back_to_onnx() -> None:
    """A 1-D convolution, a ceil-mode pooling and a nearest resize run onnx's implementations,
    and so give its results."""
    feeds = {"x": _x(1, 2, 9), "w": _x(3, 2, 3)}
    conv = _single(helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1]), feeds)
    want, got = _both(conv, feeds)
    np.testing.assert_array_equal(got, want)
    feeds = {"x": _x(1, 2, 8, 8)}
    pool = helper.make_node(
        "MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1
    )
    want, got = _both(_single(pool, feeds), feeds)
    np.testing.assert_array_equal(got, want)
    feeds["s"] = np.array([1.0, 1.0, 2.0, 2.0])
    nearest = helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest")
    want, got = _both(_single(nearest, feeds), feeds)
    np.testing.assert_array_equal(got, want)


def test_every_float32_value_becomes_float64(tmp_path: Path) -> None:
    """x * w + Cast(n) - c with x = w = 1 + 2**-23 (float32 values): in float32 the product
    loses its 2**-46 term, in float64 it is exact; the initializer, the Constant node's value
    and the Cast to float are all made float64, and the input is taken exactly."""
    one_ulp = np.float32(1 + 2**-23)
    nodes = [
        helper.make_node("Mul", ["x", "w"], ["p"]),
        helper.make_node("Cast", ["n"], ["nf"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["p", "nf"], ["s"]),
        helper.make_node(
            "Constant", [], ["c"], value=helper.make_tensor("c", TensorProto.FLOAT, [1], [1.0])
        ),
        helper.make_node("Sub", ["s", "c"], ["y"]),
    ]
    weights = {"w": np.full([2], one_ulp, np.float32), "n": np.array([3, 0], np.int64)}
    model = onnx_model(nodes, {"x": [2]}, ["y"], weights)
    doubled = float64_model(model)
    assert doubled.graph.input[0].type.tensor_type.elem_type == TensorProto.DOUBLE
    assert model.graph.input[0].type.tensor_type.elem_type == TensorProto.FLOAT  # a copy
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    x = np.full([2], one_ulp, np.float32)
    (y,) = float64_outputs(path, {"x": x})
    exact = float(one_ulp) * float(one_ulp) + np.array([3.0, 0.0]) - 1.0
    assert y.dtype == np.float64
    np.testing.assert_array_equal(y, exact)
    float32 = ReferenceEvaluator(model).run(None, {"x": x})[0]
    assert float32[1] != exact[1]  # the check would catch a float32 evaluation


def test_the_operators_are_the_documented_ones() -> None:
    assert [op.__name__ for op in OPERATORS] == ["Conv", "MaxPool", "Resize"]
    assert "Conv" in (float64_reference.__doc__ or "")


def test_op_rounding_lists_each_convolution_and_resize(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """benchmarks/op_rounding: one line per Conv and Resize (not the Relu), with its reduction
    length and a float32 rounding for onnxruntime, unoptimised, and each target asked."""
    from nnlayout.benchmarks import op_rounding

    rng = np.random.default_rng(1)
    nodes = [
        helper.make_node("Conv", ["input", "w"], ["c"], kernel_shape=[3, 3], pads=[1] * 4),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node(
            "Resize",
            ["r", "", "scales"],
            ["output"],
            mode="linear",
            coordinate_transformation_mode="half_pixel",
        ),
    ]
    weights = {
        "w": rng.standard_normal((8, 3, 3, 3)).astype(np.float32),
        "scales": np.array([1, 1, 2, 2], np.float32),
    }
    path = tmp_path / "m.onnx"
    onnx.save(onnx_model(nodes, {"input": [1, 3, 8, 8]}, ["output"], weights), str(path))
    assert op_rounding.main([str(path), "--targets", "ref,avx2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split(" | ") == ["node", "K", "onnxruntime", "unoptimised", "ref", "avx2"]
    conv, resize = (line.split(" | ") for line in lines[2:])
    assert conv[0].startswith("0 Conv") and conv[1] == "27"
    assert resize[0].startswith("2 Resize") and resize[1] == "0"
    for figure in [*conv[2:], *resize[2:]]:
        assert 0.0 <= float(figure) < 1e-6, lines
    assert len(lines) == 4
