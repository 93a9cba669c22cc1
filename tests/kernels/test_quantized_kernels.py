"""The reference kernels of the quantized ops against ONNX's own reference evaluator
(QuantizeLinear, DequantizeLinear, QLinearConv, QLinearMatMul: bit-exact) and onnxruntime
(com.microsoft's QLinearAdd, QLinearMul, QLinearGlobalAveragePool, QLinearConcat: within one
quantization step), on random inputs; and the type-agnostic ops on integer data."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from xdsl.dialects.builtin import TensorType, f32, i8, i32
from xdsl.ir import Attribute
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.kernels.reference import REFERENCE_KERNELS

U8, S8 = TensorProto.UINT8, TensorProto.INT8
NP = {U8: np.uint8, S8: np.int8, TensorProto.INT32: np.int32, TensorProto.FLOAT: np.float32}
ELEMENT: dict[int, Attribute] = {U8: nn.ui8, S8: i8, TensorProto.INT32: i32, TensorProto.FLOAT: f32}


def value(array: np.ndarray, onnx_type: int):  # type: ignore[no-untyped-def]
    return create_ssa_value(TensorType(ELEMENT[onnx_type], array.shape))


def run_ref(op, inputs: Sequence[np.ndarray]) -> np.ndarray:  # type: ignore[no-untyped-def]
    op.verify()
    return REFERENCE_KERNELS[type(op)](op, inputs)


def evaluate(
    node: onnx.NodeProto,
    feeds: dict[str, np.ndarray],
    constants: dict[str, np.ndarray],
    out_type: int,
    runtime: bool = False,
) -> np.ndarray:
    """`node` run by ONNX's reference evaluator (or onnxruntime) on `feeds`, `constants` as
    initializers."""
    graph = helper.make_graph(
        [node],
        "q",
        [
            helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
            for n, v in feeds.items()
        ],
        [helper.make_tensor_value_info(node.output[0], out_type, None)],
        [numpy_helper.from_array(v, n) for n, v in constants.items()],
    )
    opsets = [helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets, ir_version=10)
    if not runtime:
        return ReferenceEvaluator(model).run(None, feeds)[0]
    import onnxruntime

    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return session.run(None, feeds)[0]


def random_q(rng: np.random.Generator, shape: Sequence[int], onnx_type: int) -> np.ndarray:
    info = np.iinfo(NP[onnx_type])
    return rng.integers(info.min, info.max + 1, size=shape).astype(NP[onnx_type])


def zero_point(rng: np.random.Generator, onnx_type: int, count: int | None = None) -> np.ndarray:
    low, high = (0, 255) if onnx_type == U8 else (-20, 20)
    return np.asarray(rng.integers(low, high + 1, size=count), dtype=NP[onnx_type])


@pytest.mark.parametrize("onnx_type", [U8, S8])
@pytest.mark.parametrize("per_axis", [False, True])
def test_quantize_dequantize_match_onnx(onnx_type: int, per_axis: bool) -> None:
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((2, 3, 4, 5)) * 4).astype(np.float32)
    # Ties: exact halves of the scale round to even, beyond the range saturate.
    x[0, 0, 0, :] = np.array([0.5, 1.5, 2.5, -0.5, 1000.0], np.float32) * 0.25
    count = 3 if per_axis else None
    scale = np.asarray(rng.uniform(0.01, 0.1, size=count), np.float32)
    if not per_axis:
        scale = np.float32(0.25)
    zp = zero_point(rng, onnx_type, count)
    params = nn.QParams.make(scale, zp, ELEMENT[onnx_type], 1 if per_axis else None)
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1)
    want = evaluate(node, {"x": x}, {"s": np.asarray(scale), "z": zp}, onnx_type)
    got = run_ref(nn.QuantizeOp(value(x, TensorProto.FLOAT), params), [x])
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    q = random_q(rng, x.shape, onnx_type)
    node = helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1)
    want = evaluate(node, {"q": q}, {"s": np.asarray(scale), "z": zp}, TensorProto.FLOAT)
    got = run_ref(nn.DequantizeOp(value(q, onnx_type), params), [q])
    np.testing.assert_array_equal(got, want)


def test_dequantize_i32_bias() -> None:
    q = np.array([-5, 0, 1 << 20], np.int32)
    node = helper.make_node("DequantizeLinear", ["q", "s"], ["y"])
    want = evaluate(node, {"q": q}, {"s": np.float32(0.003)}, TensorProto.FLOAT)
    op = nn.DequantizeOp(value(q, TensorProto.INT32), nn.QParams.make(0.003, 0, i32))
    np.testing.assert_array_equal(run_ref(op, [q]), want)


CONV_CASES = [
    # x type, w type, per-channel w, groups, strides, pads, dilations, bias
    (U8, S8, True, 1, (1, 1), (1, 1, 1, 1), (1, 1), True),
    (U8, S8, False, 2, (2, 1), (0, 1, 2, 0), (1, 1), False),
    (S8, S8, True, 4, (1, 2), (1, 0, 1, 0), (2, 1), True),
    (U8, U8, False, 1, (1, 1), (0, 0, 0, 0), (1, 1), True),
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_qconv2d_matches_qlinearconv(case: tuple) -> None:  # type: ignore[type-arg]
    x_type, w_type, per_channel, groups, strides, pads, dilations, with_bias = case
    rng = np.random.default_rng(2)
    x = random_q(rng, (2, 4, 7, 6), x_type)
    w = random_q(rng, (8, 4 // groups, 3, 2), w_type)
    bias = rng.integers(-5000, 5000, size=8).astype(np.int32)
    count = 8 if per_channel else None
    x_p = (np.float32(0.02), zero_point(rng, x_type))
    w_p = (np.asarray(rng.uniform(0.001, 0.01, size=count), np.float32), zero_point(rng, w_type))
    if per_channel:  # onnxruntime and oneDNN want symmetric per-channel weights
        w_p = (w_p[0], np.zeros(8, NP[w_type]))
    y_p = (np.float32(0.5), zero_point(rng, x_type))
    names = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"] + (["b"] if with_bias else [])
    node = helper.make_node(
        "QLinearConv",
        names,
        ["y"],
        group=groups,
        strides=list(strides),
        pads=[pads[0], pads[1], pads[2], pads[3]],
        dilations=list(dilations),
    )
    constants = dict(
        zip(["xs", "xz", "w", "ws", "wz", "ys", "yz"], [*x_p, w, *w_p, *y_p], strict=True)
    )
    if with_bias:
        constants["b"] = bias
    want = evaluate(node, {"x": x}, constants, x_type)
    params = (
        nn.QParams.make(*x_p, ELEMENT[x_type]),
        nn.QParams.make(*w_p, ELEMENT[w_type], 0 if per_channel else None),
        nn.QParams.make(*y_p, ELEMENT[x_type]),
    )
    b_value = value(bias, TensorProto.INT32) if with_bias else None
    op = nn.QConv2dOp(
        value(x, x_type),
        value(w, w_type),
        b_value,
        params,
        strides=strides,
        pads=pads,
        dilations=dilations,
        groups=groups,
    )
    got = run_ref(op, [x, w, bias] if with_bias else [x, w])
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    # A fused Relu: the output clamped at y's zero point.
    low = int(y_p[1])
    clamped = nn.QConv2dOp(
        value(x, x_type),
        value(w, w_type),
        b_value,
        params,
        strides=strides,
        pads=pads,
        dilations=dilations,
        groups=groups,
        clamp=(low, None),
    )
    got = run_ref(clamped, [x, w, bias] if with_bias else [x, w])
    np.testing.assert_array_equal(got, np.maximum(want, want.dtype.type(low)))


@pytest.mark.parametrize("types", [(U8, S8), (S8, S8), (U8, U8)])
def test_qmatmul_matches_qlinearmatmul(types: tuple[int, int]) -> None:
    a_type, b_type = types
    rng = np.random.default_rng(3)
    a = random_q(rng, (2, 3, 16), a_type)
    b = random_q(rng, (16, 5), b_type)
    a_p = (np.float32(0.03), zero_point(rng, a_type))
    b_p = (np.float32(0.004), zero_point(rng, b_type))
    y_p = (np.float32(0.2), zero_point(rng, a_type))
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
    constants = dict(
        zip(["as", "az", "b", "bs", "bz", "ys", "yz"], [*a_p, b, *b_p, *y_p], strict=True)
    )
    want = evaluate(node, {"a": a}, constants, a_type)
    params = (
        nn.QParams.make(*a_p, ELEMENT[a_type]),
        nn.QParams.make(*b_p, ELEMENT[b_type]),
        nn.QParams.make(*y_p, ELEMENT[a_type]),
    )
    got = run_ref(nn.QMatmulOp(value(a, a_type), value(b, b_type), None, params), [a, b])
    np.testing.assert_array_equal(got, want)


def test_qmatmul_bias_and_per_column_weights() -> None:
    """A quantized Gemm: the i32 bias joins the accumulator; per-column b scales. Checked
    against DequantizeLinear -> MatMul -> Add -> QuantizeLinear in f64 (within one step)."""
    rng = np.random.default_rng(4)
    a, b = random_q(rng, (3, 16), U8), random_q(rng, (16, 5), S8)
    bias = rng.integers(-3000, 3000, size=5).astype(np.int32)
    b_scale = rng.uniform(0.001, 0.01, size=5).astype(np.float32)
    params = (
        nn.QParams.make(0.03, 7),
        nn.QParams.make(b_scale, 0, i8, 1),
        nn.QParams.make(0.1, 128),
    )
    op = nn.QMatmulOp(value(a, U8), value(b, S8), value(bias, TensorProto.INT32), params)
    got = run_ref(op, [a, b, bias]).astype(np.int64)
    real = ((a.astype(np.float64) - 7) * 0.03) @ (b * b_scale.astype(np.float64))
    real += bias * 0.03 * b_scale
    want = np.clip(np.rint(real / 0.1) + 128, 0, 255)
    assert np.abs(got - want).max() <= 1


MICROSOFT = [("QLinearAdd", nn.QAddOp), ("QLinearMul", nn.QMulOp)]


@pytest.mark.parametrize("onnx_type", [U8, S8])
@pytest.mark.parametrize(("op_type", "op_class"), MICROSOFT)
def test_qadd_qmul_match_onnxruntime(onnx_type: int, op_type: str, op_class: type) -> None:
    rng = np.random.default_rng(5)
    a, b = random_q(rng, (1, 4, 3, 3), onnx_type), random_q(rng, (4, 1, 1), onnx_type)
    p = [(np.float32(s), zero_point(rng, onnx_type)) for s in (0.05, 0.02, 0.07)]
    node = helper.make_node(
        op_type, ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"], domain="com.microsoft"
    )
    constants = dict(zip(["as", "az", "bs", "bz", "ys", "yz"], [*p[0], *p[1], *p[2]], strict=True))
    want = evaluate(node, {"a": a, "b": b}, constants, onnx_type, runtime=True)
    params = tuple(nn.QParams.make(s, z, ELEMENT[onnx_type]) for s, z in p)
    got = run_ref(op_class(value(a, onnx_type), value(b, onnx_type), params), [a, b])
    assert got.dtype == want.dtype
    assert np.abs(got.astype(np.int64) - want).max() <= 1


@pytest.mark.parametrize("onnx_type", [U8, S8])
def test_qglobal_avg_pool_and_qconcat_match_onnxruntime(onnx_type: int) -> None:
    rng = np.random.default_rng(6)
    x = random_q(rng, (2, 5, 7, 7), onnx_type)
    xp, yp = (
        (np.float32(0.05), zero_point(rng, onnx_type)),
        (np.float32(0.01), zero_point(rng, onnx_type)),
    )
    node = helper.make_node(
        "QLinearGlobalAveragePool",
        ["x", "xs", "xz", "ys", "yz"],
        ["y"],
        domain="com.microsoft",
        channels_last=0,
    )
    constants = dict(zip(["xs", "xz", "ys", "yz"], [*xp, *yp], strict=True))
    want = evaluate(node, {"x": x}, constants, onnx_type, runtime=True)
    params = (nn.QParams.make(*xp, ELEMENT[onnx_type]), nn.QParams.make(*yp, ELEMENT[onnx_type]))
    got = run_ref(nn.QGlobalAvgPoolOp(value(x, onnx_type), params), [x])
    assert np.abs(got.astype(np.int64) - want).max() <= 1

    a, b = random_q(rng, (1, 2, 3), onnx_type), random_q(rng, (1, 4, 3), onnx_type)
    pa, pb = (
        (np.float32(0.02), zero_point(rng, onnx_type)),
        (np.float32(0.3), zero_point(rng, onnx_type)),
    )
    node = helper.make_node(
        "QLinearConcat",
        ["ys", "yz", "a", "as", "az", "b", "bs", "bz"],
        ["y"],
        domain="com.microsoft",
        axis=1,
    )
    constants = dict(zip(["ys", "yz", "as", "az", "bs", "bz"], [*yp, *pa, *pb], strict=True))
    want = evaluate(node, {"a": a, "b": b}, constants, onnx_type, runtime=True)
    x_params = nn.QParams.make([pa[0], pb[0]], [pa[1], pb[1]], ELEMENT[onnx_type])
    op = nn.QConcatOp([value(a, onnx_type), value(b, onnx_type)], 1, (x_params, params[1]))
    got = run_ref(op, [a, b])
    assert np.abs(got.astype(np.int64) - want).max() <= 1


@pytest.mark.parametrize("onnx_type", [U8, S8])
def test_type_agnostic_ops_on_integer_data(onnx_type: int) -> None:
    """max_pool2d (padding never wins), pad with the zero point, nearest resize, transpose
    and slice on ui8/i8 data: as ONNX's reference evaluator computes them."""
    rng = np.random.default_rng(7)
    x = random_q(rng, (1, 3, 5, 5), onnx_type)
    x[0, 0] = np.iinfo(x.dtype).min  # a channel at the type's minimum: padding must not win
    node = helper.make_node(
        "MaxPool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]
    )
    want = evaluate(node, {"x": x}, {}, onnx_type)
    op = nn.MaxPool2dOp(value(x, onnx_type), kernel=(3, 3), strides=(2, 2), pads=(1, 1, 1, 1))
    got = run_ref(op, [x])
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, want)
    zp = int(zero_point(rng, onnx_type))
    pads = np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64)
    node = helper.make_node("Pad", ["x", "p", "v"], ["y"])
    want = evaluate(node, {"x": x}, {"p": pads, "v": np.asarray(zp, x.dtype)}, onnx_type)
    got = run_ref(nn.PadOp(value(x, onnx_type), [int(p) for p in pads], value=zp), [x])
    np.testing.assert_array_equal(got, want)
    scales = np.array([1, 1, 2, 2], np.float32)
    node = helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest")
    want = evaluate(node, {"x": x}, {"s": scales}, onnx_type)
    got = run_ref(nn.ResizeOp(value(x, onnx_type), (10, 10), (2.0, 2.0)), [x])
    np.testing.assert_array_equal(got, want)
    got = run_ref(nn.TransposeOp(value(x, onnx_type), (0, 2, 3, 1)), [x])
    np.testing.assert_array_equal(got, x.transpose(0, 2, 3, 1))


def test_requantization_rounds_ties_after_adding_the_zero_point() -> None:
    """QLinearMatMul rounds acc * multiplier + y_zero_point: with an odd zero point a tie
    goes the other way than rounding first (QuantizeLinear's order)."""
    a = np.array([[1, 3, 5, 7]], np.uint8).reshape(4, 1)
    b = np.array([[1]], np.uint8)
    p = (np.float32(1.0), np.uint8(0))
    y = (np.float32(2.0), np.uint8(1))
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
    constants = dict(zip(["as", "az", "b", "bs", "bz", "ys", "yz"], [*p, b, *p, *y], strict=True))
    want = evaluate(node, {"a": a}, constants, U8)
    params = (nn.QParams.make(*p), nn.QParams.make(*p), nn.QParams.make(*y))
    got = run_ref(nn.QMatmulOp(value(a, U8), value(b, U8), None, params), [a, b])
    np.testing.assert_array_equal(got, want)
    assert want.reshape(-1).tolist() == [2, 2, 4, 4]  # rint(1.5) = 2; rint(0.5) + 1 = 1
