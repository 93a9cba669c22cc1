"""qmul_zero_points_onednn (kernels/onednn/quantized_mul.py): a product of two 8-bit tensors
with zero points (a transformer's quantized GELU), as a reorder to b - b_zp and a binary with
post-ops, against the exact product: one step apart at most, and only where the exact value
lies at a half step."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Attribute
from xdsl.rewriter import Rewriter
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.dialects.layout import with_encoding_name
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn.quantized_mul import _Bound, _reason
from nnlayout.kernels.providers import registry
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.registry import BindingRefused
from nnlayout.kernels.targets import get_target

pytestmark = [
    pytest.mark.onednn,
    pytest.mark.skipif(not b.available(), reason="oneDNN is not available"),
]

U8, S8 = nn.ui8, IntegerType(8)
# a's, b's and y's types, the shape, zero points of a, b, y, a clamp: the GELU's product
# (rank 3, plain), signed data, a clamp (a folded Relu), a rank-4 image in NHWC.
CASES = {
    "gelu_u8": (U8, U8, U8, (1, 13, 40), 120, 3, 40, (None, None)),
    "signed": (S8, U8, S8, (2, 5, 9), -3, 200, 5, (None, None)),
    "clamped": (U8, S8, U8, (3, 50), 128, -7, 10, (10, 255)),
    "image_nhwc": (U8, U8, U8, (1, 8, 5, 5), 100, 140, 128, (None, None)),
}
SCALES = (0.05, 0.04, 0.3)  # m = a_scale * b_scale / y_scale: 1/150


def _random(rng: np.random.Generator, element: Attribute, shape: tuple[int, ...]) -> np.ndarray:
    if element == U8:
        return rng.integers(0, 256, shape).astype(np.uint8)
    return rng.integers(-128, 128, shape).astype(np.int8)


def _op(case: str) -> nn.QMulOp:
    *types, shape, a_zp, b_zp, y_zp, clamp = CASES[case]
    points = (a_zp, b_zp, y_zp)
    params = tuple(nn.QParams.make(s, z, t) for s, z, t in zip(SCALES, points, types, strict=True))
    layout = "NHWC" if len(shape) == 4 else ""

    def typed(element: Attribute) -> TensorType:
        return with_encoding_name(TensorType(element, shape), layout)

    values = [create_ssa_value(typed(t)) for t in types[:2]]
    op = nn.QMulOp(*values, params, clamp=clamp)  # type: ignore[arg-type]
    Rewriter.replace_value_with_new_type(op.output, typed(types[2]))
    return op


@pytest.mark.parametrize("case", sorted(CASES))
def test_products_with_zero_points_match_the_exact_product(case: str) -> None:
    a_type, b_type, y_type, shape, a_zp, b_zp, y_zp, clamp = CASES[case]
    rng = np.random.default_rng(0)
    a, c = _random(rng, a_type, shape), _random(rng, b_type, shape)
    op = _op(case)
    chosen = registry().select(op, get_target("onednn"), True)
    assert chosen is not None and chosen.kernel.name == "qmul_zero_points_onednn", chosen
    want = REFERENCE_KERNELS[nn.QMulOp](op, [a, c])
    exact = (a.astype(np.float64) - a_zp) * (c.astype(np.float64) - b_zp)
    exact *= SCALES[0] * SCALES[1] / SCALES[2]
    info = np.iinfo(want.dtype)
    assert np.mean((want == info.min) | (want == info.max)) < 0.3  # not all saturated
    kernel = _Bound(op)
    got = np.empty(want.shape, want.dtype)
    kernel([a, c], got)
    assert np.abs(got.astype(int) - want).max() <= 1
    differ = got != want
    assert np.all(np.abs(np.abs(exact - np.floor(exact)) - 0.5)[differ] < 1e-4)
    if clamp[0] is not None:
        assert got.min() >= clamp[0]
    bound = np.empty(want.shape, want.dtype)
    kernel.on([a, c], bound)()
    assert np.array_equal(bound, got)


def test_a_bound_call_reads_new_contents() -> None:
    """Bound once, each call centres b's current bytes again."""
    rng = np.random.default_rng(1)
    a, c = _random(rng, U8, (1, 13, 40)), _random(rng, U8, (1, 13, 40))
    op = _op("gelu_u8")
    out = np.empty(a.shape, np.uint8)
    call = _Bound(op).on([a, c], out)
    call()
    c[...] = _random(rng, U8, c.shape)
    a[...] = _random(rng, U8, a.shape)
    call()
    want = REFERENCE_KERNELS[nn.QMulOp](op, [a, c])
    assert np.abs(out.astype(int) - want).max() <= 1


def test_what_the_kernel_does_not_compute_is_named() -> None:
    params = tuple(nn.QParams.make(0.1, 3, U8) for _ in range(3))
    broadcast = nn.QMulOp(
        create_ssa_value(TensorType(U8, (1, 4, 6))),
        create_ssa_value(TensorType(U8, (1, 1, 6))),
        params,  # type: ignore[arg-type]
    )
    assert "broadcasting" in (_reason(broadcast) or "")
    plain_image = nn.QMulOp(
        create_ssa_value(TensorType(U8, (1, 4, 3, 3))),
        create_ssa_value(TensorType(U8, (1, 4, 3, 3))),
        params,  # type: ignore[arg-type]
    )
    with pytest.raises(BindingRefused, match="NHWC"):
        _Bound(plain_image)
