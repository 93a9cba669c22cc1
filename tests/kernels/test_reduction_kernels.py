"""The reduction, layer normalization and LRN kernels: the reference kernels against
onnxruntime (and ONNX's semantics for NaN and infinities), and the oneDNN kernels against the
reference, chosen where oneDNN has fast code and run on special values, with the declared
workspace holding the scratchpad used."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import LayoutSpec
from nnlayout.kernels.onednn.binding import available as onednn_available
from nnlayout.kernels.reduction_reference import layer_norm, lrn, reduce
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    AVX2,
    DEFAULT_PIPELINE,
    KERNELS,
    assert_close,
    assert_same,
    build_in_layouts,
    compile_module,
    onnxruntime_outputs,
    parse,
    tensor,
)

RNG = np.random.default_rng(3)
ONNX_NAMES = {kind: name for kind, name in nn.REDUCE_KINDS.items()}


def _value(shape: tuple[int, ...]) -> object:
    return create_ssa_value(tensor(shape))


def _onnx(node: object, shapes: dict[str, list[int]], initializers: dict, opset: int) -> object:
    graph = helper.make_graph(
        [node],
        "kernel",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in shapes.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, n) for n, v in initializers.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("kind", sorted(nn.REDUCE_KINDS))
@pytest.mark.parametrize("axes", [(1,), (0, 2), (0, 1, 2)])
def test_reference_reductions_match_onnxruntime(kind: str, axes: tuple[int, ...]) -> None:
    x = RNG.standard_normal((3, 5, 4)).astype(np.float32)
    if kind in ("log_sum", "prod"):
        x = np.abs(x) + 0.5  # a positive sum to take the log of; products of moderate size
    op = nn.ReduceOp(_value(x.shape), kind, axes)
    node = helper.make_node(ONNX_NAMES[kind], ["x", "axes"], ["y"], keepdims=1)
    model = _onnx(node, {"x": list(x.shape)}, {"axes": np.array(axes, np.int64)}, 18)
    [want] = onnxruntime_outputs(model, [x])
    got = reduce(op, [x])
    assert got.dtype == np.float32
    assert_close(want, got, 1e-5)


@pytest.mark.parametrize(
    ("kind", "special", "expected"),
    [
        ("max", np.nan, np.nan),
        ("min", np.nan, np.nan),
        ("sum", np.inf, np.inf),
        ("mean", -np.inf, -np.inf),
        ("l2", -np.inf, np.inf),
        ("max", -np.inf, None),  # the others win
        ("prod", np.nan, np.nan),
    ],
)
def test_reference_reductions_propagate_special_values(
    kind: str, special: float, expected: float | None
) -> None:
    x = RNG.standard_normal((2, 6)).astype(np.float32)
    x[1, 3] = special
    got = reduce(nn.ReduceOp(_value(x.shape), kind, [1]), [x])
    assert np.isfinite(got[0, 0])
    if expected is None:
        assert got[1, 0] == x[1].max()
    else:
        np.testing.assert_equal(got[1, 0], np.float32(expected))


@pytest.mark.parametrize(("shape", "axis"), [((2, 7, 12), -1), ((2, 4, 3, 5), 1), ((6, 4), 0)])
def test_reference_layer_norm_matches_onnxruntime(shape: tuple[int, ...], axis: int) -> None:
    x = (RNG.standard_normal(shape) * 3 + 1).astype(np.float32)
    normalised = shape[axis % len(shape) :]
    scale = RNG.standard_normal(normalised).astype(np.float32)
    bias = RNG.standard_normal(normalised[-1:]).astype(np.float32)  # broadcast
    op = nn.LayerNormOp(_value(shape), _value(scale.shape), _value(bias.shape), axis, 1e-3)
    node = helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=axis, epsilon=1e-3)
    model = _onnx(node, {"x": list(shape)}, {"s": scale, "b": bias}, 17)
    [want] = onnxruntime_outputs(model, [x])
    assert_close(want, layer_norm(op, [x, scale, bias]), 1e-5)


@pytest.mark.parametrize("size", [1, 3, 5])
def test_reference_lrn_matches_onnxruntime(size: int) -> None:
    x = RNG.standard_normal((2, 7, 3, 4)).astype(np.float32)
    op = nn.LrnOp(_value(x.shape), size, 0.3, 0.6, 2.0)
    node = helper.make_node("LRN", ["x"], ["y"], size=size, alpha=0.3, beta=0.6, bias=2.0)
    [want] = onnxruntime_outputs(_onnx(node, {"x": list(x.shape)}, {}, 13), [x])
    assert_close(want, lrn(op, [x]), 1e-5)


def test_reference_lrn_window_of_an_even_size_and_nan_stays_in_its_window() -> None:
    """ONNX's window is c - floor((size - 1) / 2) .. c + ceil((size - 1) / 2): for size 4,
    one channel before and two after; a NaN reaches only the channels whose window holds
    it."""
    x = np.ones((1, 8, 1, 1), np.float32)
    x[0, 6] = np.nan
    got = lrn(nn.LrnOp(_value(x.shape), 4, 4.0, 1.0, 0.0), [x])[0, :, 0, 0]
    # channel c sums channels c-1 .. c+2 that exist: 3 at c = 0 (0..2), 4 inside
    np.testing.assert_allclose(got[:4], [1 / 3, 1 / 4, 1 / 4, 1 / 4])
    assert np.isnan(got[4:]).all() and np.isfinite(got[:4]).all()


@pytest.mark.parametrize("layout", ["NCHW8c", "NCHW16c", "NHWC", "NCHW4c2c"])
@pytest.mark.parametrize("axes", [(1,), (2, 3), (0, 1, 3)])
@pytest.mark.parametrize("kind", sorted(nn.REDUCE_KINDS))
def test_blocked_reduction_in_any_layout(layout: str, axes: tuple[int, ...], kind: str) -> None:
    """reduce_any on packed data of 20 channels (4 or 12 padding lanes) equals the
    reference on the logical data, its padding lanes zero; values in (-2, -1) (in (1, 2) for
    log_sum), so that a padding zero would win a max, zero a product and shrink a mean."""
    x = -1 - RNG.random((2, 20, 3, 4)).astype(np.float32)
    x = -x if kind == "log_sum" else x
    op, [packed], result_layout = build_in_layouts(
        "reduce_any", AVX2, nn.ReduceOp, [x], any_layout=layout, kind=kind, axes=axes
    )
    got = KERNELS["reduce_any"].impl(op, [packed])
    spec = LayoutSpec.parse(result_layout)
    shape = nn.shape_of(op.output)
    assert got.shape == spec.physical_shape(shape) and got.dtype == np.float32
    assert not got[spec.padding_mask(shape)].any()
    want = reduce(op, [x])
    np.testing.assert_allclose(spec.unpack(got, shape), want, rtol=1e-6)


# ---------------------------------------------------------------------------- oneDNN
onednn = pytest.mark.skipif(not onednn_available(), reason="oneDNN is not available")


def _chosen(module: object) -> dict[str, str]:
    return {
        op.name: kernel_of(op).kernel_name.data
        for op in module.walk()  # type: ignore[attr-defined]
        if kernel_of(op) is not None
    }


def _check_onednn(text: str, inputs: list[np.ndarray], op_name: str) -> None:
    """The op gets its oneDNN kernel on every oneDNN target and gives the reference's
    results, interpreted and generated."""
    module = parse(text)
    expected = Interpreter(module).run(inputs)
    for target in ("onednn", "onednn-nchw8c", "onednn-nchw16c"):
        compiled = compile_module(module, target, True)
        assert _chosen(compiled)[op_name] == op_name[3:] + "_onednn"
        assert_same(expected, Interpreter(compiled).run(inputs))
        generated = run_generated(compile_module(module, target, True, DEFAULT_PIPELINE), inputs)
        assert_same(expected, generated)


@onednn
@pytest.mark.parametrize("kind", ["sum", "mean", "max", "min", "prod"])
def test_onednn_reductions_over_trailing_axes(kind: str) -> None:
    """(oneDNN 3.2 has only its reference code for its Lp norms, which stay in numpy.)"""
    text = f"""
func.func @f(%x: tensor<2x7x20xf32>) -> tensor<2x1x1xf32> {{
  %0 = nn.reduce %x kind "{kind}" axes [1, 2] : tensor<2x7x20xf32> -> tensor<2x1x1xf32>
  func.return %0 : tensor<2x1x1xf32>
}}"""
    x = (RNG.standard_normal((2, 7, 20)) * (0.2 if kind == "prod" else 1) + 1).astype(np.float32)
    _check_onednn(text, [x], "nn.reduce")


@onednn
@pytest.mark.parametrize(
    ("kind", "special"), [("max", np.nan), ("min", np.nan), ("sum", np.inf), ("mean", 3e38)]
)
def test_onednn_reductions_of_special_values_run_as_the_reference(
    kind: str, special: float
) -> None:
    """oneDNN's max and min drop NaN, and its float32 sums overflow where the reference's
    float64 ones do not (a mean of 3e38s): such calls run in numpy."""
    text = f"""
func.func @f(%x: tensor<3x16xf32>) -> tensor<3x1xf32> {{
  %0 = nn.reduce %x kind "{kind}" axes [1] : tensor<3x16xf32> -> tensor<3x1xf32>
  func.return %0 : tensor<3x1xf32>
}}"""
    x = RNG.standard_normal((3, 16)).astype(np.float32)
    x[1] = 3e38 if special == 3e38 else x[1]
    x[1, 5] = special
    module = parse(text)
    [expected] = Interpreter(module).run([x])
    assert not np.isfinite(expected[1, 0]) or special == 3e38
    assert np.isfinite(expected[[0, 2]]).all()
    _check_onednn(text, [x], "nn.reduce")


@onednn
@pytest.mark.parametrize(
    ("shape", "axis", "normalised"),
    [("2x7x20", -1, "20"), ("2x4x3x5", 1, "4x3x5"), ("12x6", 0, "12x6")],
)
def test_onednn_layer_norm_over_any_axis(shape: str, axis: int, normalised: str) -> None:
    """oneDNN normalises rows: the input is described as [rows, normalised elements]."""
    text = f"""
func.func @f(%x: tensor<{shape}xf32>, %s: tensor<{normalised}xf32>, %b: tensor<{normalised}xf32>) -> tensor<{shape}xf32> {{
  %0 = nn.layer_norm %x, %s, %b axis {axis} epsilon 1.0e-5 : (tensor<{shape}xf32>, tensor<{normalised}xf32>, tensor<{normalised}xf32>) -> tensor<{shape}xf32>
  func.return %0 : tensor<{shape}xf32>
}}"""
    dims = [[int(d) for d in s.split("x")] for s in (shape, normalised, normalised)]
    inputs = [RNG.standard_normal(d).astype(np.float32) for d in dims]
    inputs[1] += 1
    inputs[0][0, 1] = np.nan  # one row (or the whole of axis 0's sample) becomes NaN
    _check_onednn(text, inputs, "nn.layer_norm")


@onednn
def test_onednn_lrn_across_32_channels() -> None:
    text = """
func.func @f(%x: tensor<1x32x5x5xf32>) -> tensor<1x32x5x5xf32> {
  %0 = nn.lrn %x size 5 alpha 1.0e-2 beta 0.75 bias 1.5 : tensor<1x32x5x5xf32>
  func.return %0 : tensor<1x32x5x5xf32>
}"""
    _check_onednn(text, [RNG.standard_normal((1, 32, 5, 5)).astype(np.float32) * 3], "nn.lrn")
