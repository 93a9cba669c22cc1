"""oneDNN's int8 matmul (kernels/onednn/quantized_matmul.py) against an integer numpy
reference of ONNX's QLinearMatMul (with an i32 bias, as nn.qmatmul has): exact here, one
step apart at most where the exact value lies at a half step (f32 requantization)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn.quantized import QuantParams
from nnlayout.kernels.onednn.quantized_kernels import prepare_qmatmul
from nnlayout.kernels.onednn.quantized_matmul import QMatmul, QMatmulParams, qmatmul_refusal
from nnlayout.kernels.reference import REFERENCE_KERNELS

pytestmark = [
    pytest.mark.onednn,
    pytest.mark.skipif(
        not (b.available() and b.runs_vnni()),
        reason="oneDNN's int8 code here has no VNNI or AMX (its kernels refuse it)",
    ),
]

# a's shape, N, a's type, a_zp, b_zp: ResNet-50's classifier, a transformer's projection,
# and a product with zero points on both sides.
CASES = {
    "classifier_u8": ((1, 2048), 1000, np.uint8, 0, 0),
    "projection_s8_zp": ((2, 64, 768), 768, np.int8, 3, 0),
    "both_zero_points_u8": ((8, 256), 128, np.uint8, 100, 2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_int8_matmul_matches_the_integer_reference(name: str) -> None:
    a_shape, n, a_type, a_zp, b_zp = CASES[name]
    rng = np.random.default_rng(0)
    info = np.iinfo(a_type)
    a = rng.integers(info.min, info.max + 1, a_shape).astype(a_type)
    k = a_shape[-1]
    w = rng.integers(-127, 128, (k, n)).astype(np.int8)
    bias = rng.integers(-20000, 20000, n).astype(np.int32)
    w_scale = rng.uniform(0.002, 0.02, n).astype(np.float32).astype(np.float64)
    acc = (a.astype(np.int64) - a_zp) @ (w.astype(np.int64) - b_zp) + bias
    real = acc * 0.02 * w_scale
    y_scale = float(np.float32((real.max() - real.min()) / 255))
    y_zp = int(np.clip(round(-real.min() / y_scale), 0, 255))
    params = QuantParams(0.02, tuple(w_scale), y_scale, a_zp, y_zp)
    src_type = b.dnnl_u8 if a_type == np.uint8 else b.dnnl_s8
    q = QMatmulParams(a_shape, (k, n), True, src_type, b.dnnl_u8, True, a_zp != 0, b_zp != 0)
    kernel = QMatmul(q, w, bias, params, b_zp)
    assert not kernel.implementation.startswith("ref"), kernel.implementation
    got = kernel.run(a)
    exact = acc * (0.02 * w_scale / np.float64(y_scale))
    want = np.clip(np.rint(exact) + y_zp, 0, 255).astype(np.uint8)
    assert np.mean((want == 0) | (want == 255)) < 0.05
    differ = got != want
    assert np.abs(got.astype(int) - want).max() <= 1
    assert np.all(
        np.abs(np.abs(exact - np.floor(exact)) - 0.5)[differ] < 1e-4 * np.abs(exact[differ])
    )


def test_what_onednn_refuses_is_named() -> None:
    zero = np.zeros(3, np.int8)
    assert qmatmul_refusal(np.uint8, np.int8, zero, 2, 2) is None
    assert "per column" in qmatmul_refusal(np.uint8, np.int8, np.array([0, 1, 0], np.int8), 2, 2)
    assert "s8 weights" in qmatmul_refusal(np.uint8, np.uint8, zero, 2, 2)
    assert "u8 or s8" in qmatmul_refusal(np.int32, np.int8, zero, 2, 2)
    assert "rank 1" in qmatmul_refusal(np.uint8, np.int8, zero, 1, 2)
    assert qmatmul_refusal(np.uint8, np.int8, zero, 4, 2) is None  # rows: the leading axes


@pytest.mark.parametrize("a_shape", [(50, 1, 40), (2, 5, 5, 40)], ids=["rank3", "rank4"])
def test_leading_axes_are_rows_of_one_product(a_shape: tuple[int, ...]) -> None:
    """torch's attention projects [L, 1, E] inputs: the kernel runs one product of L rows
    (not L products of one row), with the reference's result; rank 4 likewise."""
    rng = np.random.default_rng(1)
    a_type, w_type = nn.ui8, IntegerType(8)
    params = (
        nn.QParams.make(0.02, 120, a_type),
        nn.QParams.make(rng.uniform(0.002, 0.02, 24).astype(np.float32), 0, w_type, axis=1),
        nn.QParams.make(0.5, 128, a_type),
    )
    op = nn.QMatmulOp(
        create_ssa_value(TensorType(a_type, a_shape)),
        create_ssa_value(TensorType(w_type, (40, 24))),
        create_ssa_value(TensorType(IntegerType(32), (24,))),
        params,
    )
    bound = prepare_qmatmul(op)
    assert bound.kernel.q.a == (50, 40)  # every shape here has 50 rows
    inputs = [
        rng.integers(0, 256, a_shape).astype(np.uint8),
        rng.integers(-127, 128, (40, 24)).astype(np.int8),
        rng.integers(-2000, 2000, 24).astype(np.int32),
    ]
    want = REFERENCE_KERNELS[nn.QMatmulOp](op, inputs)
    got = np.empty(want.shape, np.uint8)
    bound(inputs, got)
    assert np.abs(got.astype(int) - want.astype(int)).max() <= 1
    assert np.mean(got != want) < 0.01
