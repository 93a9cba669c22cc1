"""The quantized ops' builders and `QParams`: what they build verifies and reads back as given;
type-agnostic ops take ui8 data, float ops refuse it."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32, i8, i32
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn


def value(element_type, *shape: int):  # type: ignore[no-untyped-def]
    return create_ssa_value(TensorType(element_type, shape))


def test_quantize_dequantize_round_trip_their_parameters() -> None:
    x = value(f32, 1, 3, 2, 2)
    per_axis = nn.QParams.make([0.5, 0.25, 2.0], [0, -3, 7], i8, axis=1)
    quantize = nn.QuantizeOp(x, per_axis)
    quantize.verify()
    assert quantize.output.type == TensorType(i8, (1, 3, 2, 2))
    assert quantize.qparams().same_as(per_axis)
    dequantize = nn.DequantizeOp(quantize.output, nn.QParams.make(0.1, 128, nn.ui8))
    with pytest.raises(VerifyException, match="x_zero_point must have type tensor<i8>"):
        dequantize.verify()
    dequantize = nn.DequantizeOp(quantize.output, quantize.qparams())
    dequantize.verify()
    assert dequantize.output.type == TensorType(f32, (1, 3, 2, 2))
    assert not dequantize.qparams().same_as(nn.QParams.make(0.5, 0, i8))


def test_qconv2d_builder_per_channel_weights() -> None:
    x, w, b = value(nn.ui8, 1, 4, 5, 5), value(i8, 6, 2, 3, 3), value(i32, 6)
    params = (
        nn.QParams.make(0.02, 128),
        nn.QParams.make(np.linspace(0.01, 0.06, 6), 0, i8),
        nn.QParams.make(0.1, 0),
    )
    conv = nn.QConv2dOp(
        x, w, b, params, strides=(2, 2), pads=(1, 1, 1, 1), groups=2, clamp=(0, None)
    )
    conv.verify()
    assert conv.output.type == TensorType(nn.ui8, (1, 6, 3, 3))
    assert conv.qparams("w").axis == 0 and conv.qparams("w").scale.shape == (6,)
    assert conv.qparams("x").zero_point.item() == 128 and conv.clamp_min is not None


def test_qmatmul_qbinary_qpool_qconcat_builders() -> None:
    a, b = value(nn.ui8, 2, 8), value(i8, 8, 4)
    p = nn.QParams.make(0.5, 3)
    matmul = nn.QMatmulOp(a, b, value(i32, 4), (p, nn.QParams.make([1.0] * 4, 0, i8), p))
    matmul.verify()
    assert matmul.output.type == TensorType(nn.ui8, (2, 4)) and matmul.qparams("b").axis == 1
    add = nn.QAddOp(value(nn.ui8, 1, 4, 2, 2), value(nn.ui8, 4, 1, 1), (p, p, p))
    add.verify()
    mul = nn.QMulOp(add.output, add.output, (p, p, nn.QParams.make(0.25, 0)), clamp=(3, 200))
    mul.verify()
    assert (mul.clamp_min.value.data, mul.clamp_max.value.data) == (3, 200)  # type: ignore[union-attr]
    with pytest.raises(VerifyException, match="nn.qadd: clamp_max 300 is outside ui8's range"):
        nn.QAddOp(add.output, add.output, (p, p, p), clamp=(None, 300)).verify()
    pool = nn.QGlobalAvgPoolOp(mul.output, (p, p))
    pool.verify()
    assert pool.output.type == TensorType(nn.ui8, (1, 4, 1, 1))
    concat = nn.QConcatOp([pool.output, pool.output], 1, (nn.QParams.make([1, 2], [3, 4]), p))
    concat.verify()
    assert [q.zero_point.item() for q in concat.input_qparams()] == [3, 4]


def test_type_agnostic_ops_take_quantized_data_float_ops_refuse_it() -> None:
    x = value(nn.ui8, 1, 2, 4, 4)
    nn.MaxPool2dOp(x, kernel=(2, 2), strides=(2, 2)).verify()
    nn.TransposeOp(x, (0, 2, 3, 1)).verify()
    nn.ConcatOp([x, x], 1).verify()
    with pytest.raises(VerifyException, match="nn.relu: computes on floats"):
        nn.ReluOp(x).verify()
    with pytest.raises(VerifyException, match="nn.avg_pool2d: computes on floats"):
        nn.AvgPool2dOp(x, kernel=(2, 2)).verify()
    mixed = nn.AddOp.create(operands=[x, value(f32, 1, 2, 4, 4)], result_types=[x.type])
    with pytest.raises(VerifyException, match="operand 1 has element type f32, expected ui8"):
        mixed.verify()
