"""The reference kernels of the dynamic quantization ops against ONNX's own reference
evaluator, bit for bit: DynamicQuantizeLinear (its three outputs, on ranges that hold 0, are
all positive, all negative, or all 0), MatMulInteger (u8/s8 operands, run-time and constant
zero points, per column, batched) and ConvInteger (strides, pads holding x's zero point,
dilations, groups, per-channel weight zero points), and Cast of i32 to float32."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from nnlayout.dialects import nn
from nnlayout.tests.kernels.test_quantized_kernels import (
    S8,
    U8,
    evaluate,
    random_q,
    run_ref,
    value,
    zero_point,
)

RANGES = {
    "mixed": lambda x: x,
    "positive": lambda x: np.abs(x) + 0.5,
    "negative": lambda x: -np.abs(x) - 0.5,
    "zeros": lambda x: np.zeros_like(x),
    # scale 0.5: 0.25, 0.75 and 1.25 are ties of x / scale, rounded to even
    "ties": lambda x: np.array([[0.0, 0.25, 0.75, 1.25, 127.5]], np.float32).repeat(2, axis=0),
}


@pytest.mark.parametrize("kind", RANGES)
def test_dynamic_quantize_matches_onnx(kind: str) -> None:
    rng = np.random.default_rng(3)
    x = RANGES[kind]((rng.standard_normal((2, 4)) * 3).astype(np.float32)).astype(np.float32)
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])
    graph = helper.make_graph(
        [node],
        "d",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [
            helper.make_tensor_value_info("y", TensorProto.UINT8, None),
            helper.make_tensor_value_info("s", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("z", TensorProto.UINT8, None),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    want_y, want_s, want_z = ReferenceEvaluator(model).run(None, {"x": x})
    x_value = value(x, TensorProto.FLOAT)
    scale_op, zp_op = nn.DynamicScaleOp(x_value), nn.DynamicZeroPointOp(x_value)
    scale, zp = run_ref(scale_op, [x]), run_ref(zp_op, [x])
    quantize = nn.DynamicQuantizeOp(x_value, scale_op.output, zp_op.output)
    y = run_ref(quantize, [x, scale, zp])
    for got, want in ((scale, want_s), (zp, want_z), (y, want_y)):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


MATMUL_CASES = [
    # a type, b type, a shape, b shape, a zero point, b zero point per column
    (U8, S8, (5, 7), (7, 3), True, False),
    (U8, S8, (2, 5, 7), (7, 3), True, True),
    (S8, U8, (5, 7), (7, 3), False, True),
    (U8, U8, (7,), (7, 3), True, False),
]


@pytest.mark.parametrize("case", MATMUL_CASES)
def test_matmul_integer_matches_onnx(case: tuple) -> None:  # type: ignore[type-arg]
    a_type, b_type, a_shape, b_shape, with_a_zp, per_column = case
    rng = np.random.default_rng(4)
    a, b = random_q(rng, a_shape, a_type), random_q(rng, b_shape, b_type)
    a_zp = zero_point(rng, a_type)
    b_zp = zero_point(rng, b_type, b_shape[-1] if per_column else None)
    names = ["a", "b", "az" if with_a_zp else "", "bz"]
    node = helper.make_node("MatMulInteger", names, ["y"])
    feeds = {"a": a, **({"az": a_zp} if with_a_zp else {})}
    want = evaluate(node, feeds, {"b": b, "bz": b_zp}, TensorProto.INT32)
    a_zp_value = value(a_zp, a_type) if with_a_zp else None
    op = nn.MatmulIntegerOp(value(a, a_type), value(b, b_type), a_zp_value, b_zp)
    got = run_ref(op, [a, b, *([a_zp] if with_a_zp else [])])
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)


CONV_CASES = [
    # x type, w type, per-channel w zero point, groups, strides, pads, dilations
    (U8, S8, False, 1, (1, 1), (1, 1, 1, 1), (1, 1)),
    (U8, S8, True, 2, (2, 1), (0, 1, 2, 0), (1, 1)),
    (S8, U8, True, 4, (1, 2), (1, 0, 1, 0), (2, 1)),
    (U8, U8, False, 1, (1, 1), (2, 2, 2, 2), (1, 1)),
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_integer_matches_onnx(case: tuple) -> None:  # type: ignore[type-arg]
    x_type, w_type, per_channel, groups, strides, pads, dilations = case
    rng = np.random.default_rng(5)
    x = random_q(rng, (2, 4, 7, 6), x_type)
    w = random_q(rng, (8, 4 // groups, 3, 2), w_type)
    x_zp = zero_point(rng, x_type)
    w_zp = zero_point(rng, w_type, 8 if per_channel else None)
    node = helper.make_node(
        "ConvInteger",
        ["x", "w", "xz", "wz"],
        ["y"],
        group=groups,
        strides=list(strides),
        pads=list(pads),
        dilations=list(dilations),
    )
    want = evaluate(node, {"x": x, "xz": x_zp}, {"w": w, "wz": w_zp}, TensorProto.INT32)
    op = nn.ConvIntegerOp(
        value(x, x_type),
        value(w, w_type),
        value(x_zp, x_type),
        w_zp,
        strides=strides,
        pads=pads,
        dilations=dilations,
        groups=groups,
    )
    got = run_ref(op, [x, w, x_zp])
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)


def test_cast_of_integer_sums_matches_onnx() -> None:
    q = np.array([-(1 << 25) - 1, -5, 0, 7, (1 << 24) + 1, (1 << 31) - 1], np.int32)
    node = helper.make_node("Cast", ["q"], ["y"], to=TensorProto.FLOAT)
    want = evaluate(node, {"q": q}, {}, TensorProto.FLOAT)
    got = run_ref(nn.CastOp(value(q, TensorProto.INT32)), [q])
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
