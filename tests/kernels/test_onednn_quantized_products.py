"""qmatmul_runtime_b_onednn (kernels/onednn/quantized_products.py): int8 products whose b is
given on each call (attention's Q.K^T and P.V), u8 b flipped to s8 with its zero point moved,
against the exact integer product: one step apart at most, and only where the exact value
lies at a half step."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Attribute
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn.quantized_products import _Bound, _reason
from nnlayout.kernels.registry import BindingRefused

pytestmark = [
    pytest.mark.onednn,
    pytest.mark.skipif(
        not (b.available() and b.runs_vnni()),
        reason="oneDNN's int8 code here has no VNNI or AMX (its kernels refuse it)",
    ),
]

U8, S8 = nn.ui8, IntegerType(8)
# a's type and shape, b's, zero points of a and b: attention's two products (u8 x u8,
# batched over heads), b signed, a batch axis broadcast, a 2-D b under a batched a; b's zero
# point at both ends of u8 (oneDNN is given -128 and 127).
CASES = {
    "scores_u8_u8": (U8, (4, 19, 16), U8, (4, 16, 19), 120, 131),
    "values_u8_s8": (U8, (4, 19, 19), S8, (4, 19, 16), 0, -3),
    "broadcast_s8_u8": (S8, (2, 3, 5, 40), U8, (3, 40, 7), 5, 0),
    "matrix_b_u8": (S8, (2, 5, 40), U8, (40, 9), -2, 255),
}


def _random(rng: np.random.Generator, element: Attribute, shape: tuple[int, ...]) -> np.ndarray:
    if element == U8:
        return rng.integers(0, 256, shape).astype(np.uint8)
    return rng.integers(-128, 128, shape).astype(np.int8)


def _product(case: str, a: np.ndarray, w: np.ndarray) -> nn.QMatmulOp:
    """The product of `case` on `a` and `w`, y's scale and zero point spanning its range."""
    a_type, a_shape, b_type, b_shape, a_zp, b_zp = CASES[case]
    acc = (a.astype(np.int64) - a_zp) @ (w.astype(np.int64) - b_zp)
    y_scale = float(np.float32(0.02 * 0.03 * (acc.max() - acc.min()) / 255))
    y_zp = int(np.clip(round(-acc.min() * 0.02 * 0.03 / y_scale), 0, 255))
    params = (
        nn.QParams.make(0.02, a_zp, a_type),
        nn.QParams.make(0.03, b_zp, b_type),
        nn.QParams.make(y_scale, y_zp, U8),
    )
    a_value = create_ssa_value(TensorType(a_type, a_shape))
    return nn.QMatmulOp(a_value, create_ssa_value(TensorType(b_type, b_shape)), None, params)


def _operands(case: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return _random(rng, CASES[case][0], CASES[case][1]), _random(
        rng, CASES[case][2], CASES[case][3]
    )


def _exact(op: nn.QMatmulOp, a: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The exact requantized value (before rounding) and the reference's result."""
    a_p, b_p, y_p = (op.qparams(side) for side in "aby")
    acc = (a.astype(np.int64) - int(a_p.zero_point)) @ (w.astype(np.int64) - int(b_p.zero_point))
    multiplier = np.float64(np.float32(a_p.scale)) * np.float32(b_p.scale) / np.float32(y_p.scale)
    exact = acc * multiplier
    return exact, np.clip(np.rint(exact) + int(y_p.zero_point), 0, 255).astype(np.uint8)


def _check(got: np.ndarray, exact: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape
    assert np.abs(got.astype(int) - want).max() <= 1
    differ = got != want
    assert np.all(np.abs(np.abs(exact - np.floor(exact)) - 0.5)[differ] < 1e-4)


@pytest.mark.parametrize("case", sorted(CASES))
def test_products_of_activations_match_the_exact_product(case: str) -> None:
    a, w = _operands(case, 0)
    op = _product(case, a, w)
    exact, want = _exact(op, a, w)
    assert np.mean((want == 0) | (want == 255)) < 0.05  # the range is used, not saturated
    kernel = _Bound(op)
    got = np.empty(want.shape, np.uint8)
    kernel([a, w], got)
    _check(got, exact, want)
    bound_out = np.empty(want.shape, np.uint8)
    kernel.on([a, w], bound_out)()
    assert np.array_equal(bound_out, got)


def test_a_bound_call_reads_b_anew_on_each_call() -> None:
    """Bound once (`on`), the call flips b's current bytes each time: new contents of the
    same array give the product of the new b."""
    a, w = _operands("scores_u8_u8", 1)
    op = _product("scores_u8_u8", a, w)
    out = np.empty((4, 19, 19), np.uint8)
    call = _Bound(op).on([a, w], out)
    call()
    w[...] = _operands("scores_u8_u8", 2)[1]
    call()
    _check(out, *_exact(op, a, w))


def _op_with(**changes: object) -> nn.QMatmulOp:
    a_type, b_type = changes.get("a_type", U8), changes.get("b_type", U8)
    b_shape = changes.get("b_shape", (4, 16, 19))
    zero_point = changes.get("b_zp", 128)
    scale = np.full(np.shape(zero_point), 0.03, np.float32)  # per column where b's zp is
    axis = {"axis": 2} if np.ndim(zero_point) else {}
    b_params = nn.QParams.make(scale, zero_point, b_type, **axis)
    params = (nn.QParams.make(0.02, 128, a_type), b_params, nn.QParams.make(0.5, 128, U8))
    bias = changes.get("bias")
    return nn.QMatmulOp(
        create_ssa_value(TensorType(a_type, (4, 19, 16))),
        create_ssa_value(TensorType(b_type, b_shape)),
        None if bias is None else create_ssa_value(TensorType(IntegerType(32), (19,))),
        params,
        clamp=changes.get("clamp", (None, None)),
    )


def test_what_the_kernel_does_not_compute_is_named() -> None:
    assert _reason(_op_with()) is None
    columns = np.arange(19, dtype=np.uint8)
    refusals = {
        "per column": _op_with(b_zp=columns),
        "bias": _op_with(bias=True),
        "clamp": _op_with(clamp=(0, 100)),
        "takes u8 or s8": _op_with(b_type=IntegerType(32), b_zp=0),
    }
    for words, op in refusals.items():
        reason = _reason(op)
        assert reason is not None and words in reason, (words, reason)
        with pytest.raises(BindingRefused, match=words):
            _Bound(op)
