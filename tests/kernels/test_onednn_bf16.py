"""oneDNN's bf16 convolutions (kernels/onednn/bf16.py) against the float64 convolution of
the same f32 operands, and its f32 <-> bf16 conversions. Measured here (AMX and
AVX512_BF16 code): the largest difference of a bf16 convolution is 1.6e-3 to 2.3e-3 of the
result's largest magnitude with an f32 result, 2.9e-3 to 3.6e-3 with a bf16 one;
MAX_RELATIVE (2^-7 = 7.8e-3) bounds it."""

from __future__ import annotations

import numpy as np
import pytest

from nnlayout.dialects import nn
from nnlayout.dialects.layout import buffer_bytes
from nnlayout.dialects.nn.base import bf16_dtype
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn.attributes import float_math
from nnlayout.kernels.onednn.bf16 import Bf16Conv, bf16_refusal, from_bf16, to_bf16
from nnlayout.kernels.onednn.convolution import ConvGeometry
from nnlayout.kernels.providers import registry
from nnlayout.kernels.reference_bf16 import cast
from nnlayout.tests.helpers import parse
from nnlayout.tests.kernels.test_onednn_quantized import window_conv

pytestmark = pytest.mark.onednn
needs_bf16 = pytest.mark.skipif(
    not b.available() or bf16_refusal() is not None, reason=f"{bf16_refusal()}"
)
# Of the result's largest magnitude: bf16 operands (2^-8 each) and a bf16 result (2^-8).
MAX_RELATIVE = 2.0**-7


def test_conversion_rounds_to_nearest_even() -> None:
    one = np.float32(1)
    x = np.array(
        [1, 1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-7 + 2**-9, -0.0, np.inf, -np.inf, 3e38], np.float32
    )
    got = from_bf16(to_bf16(x))
    want = [1, 1, 1 + 2**-6, 1 + 2**-7, -0.0, np.inf, -np.inf, 2.9980e38]
    np.testing.assert_allclose(got[:7], want[:7], rtol=0)
    assert np.signbit(got[4]) and abs(got[7] - 3e38) < 3e38 * 2**-8
    assert np.isnan(from_bf16(to_bf16(np.array([np.nan], np.float32))))[0]
    assert from_bf16(to_bf16(np.array([one]))).dtype == np.float32


def test_conversion_keeps_shape_and_is_exact_on_bf16_values() -> None:
    rng = np.random.default_rng(1)
    x = from_bf16(to_bf16(rng.standard_normal((3, 5, 7)).astype(np.float32)))
    assert x.shape == (3, 5, 7)
    np.testing.assert_array_equal(from_bf16(to_bf16(x)), x)


CASES = {
    "resnet_3x3": (64, 56, 64, 3, 1, 1),
    "resnet_1x1": (256, 28, 64, 1, 1, 1),
    "resnet_stem": (3, 64, 64, 7, 2, 1),
    "mobilenet_depthwise": (32, 28, 32, 3, 1, 32),
}


@needs_bf16
@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dst_type", [b.dnnl_bf16, b.dnnl_f32])
def test_bf16_convolution_is_close_to_float(name: str, dst_type: int) -> None:
    c, size, o, k, stride, groups = CASES[name]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, c, size, size)).astype(np.float32)
    w = (rng.standard_normal((o, c // groups, k, k)) / np.sqrt(c // groups * k * k)).astype(
        np.float32
    )
    bias = rng.standard_normal(o).astype(np.float32)
    pad = k // 2
    want = window_conv(x.astype(np.float64), w.astype(np.float64), stride, pad, groups)
    want += bias.reshape(1, o, 1, 1)
    weights = w if groups == 1 else w.reshape(groups, o // groups, c // groups, k, k)
    g = ConvGeometry(
        x.shape,
        weights.shape,
        True,
        want.shape,
        (stride, stride),
        (1, 1),
        (pad, pad),
        (pad, pad),
        "weights" if groups == 1 else "depthwise",
    )
    kernel = Bf16Conv(g, weights, bias, dst_type=dst_type)
    assert not kernel.implementation.startswith("ref"), kernel.implementation
    got = kernel.run_plain(x)
    relative = np.abs(got - want).max() / np.abs(want).max()
    assert 0 < relative < MAX_RELATIVE, relative


@needs_bf16
@pytest.mark.parametrize("fpmath", ["strict", "bf16"])
def test_f32_convolutions_in_bf16_math(monkeypatch: pytest.MonkeyPatch, fpmath: str) -> None:
    """NNLAYOUT_ONEDNN_FPMATH=bf16: an f32 convolution (f32 in memory) computed by oneDNN's
    bf16 code; measured here 2.2e-3 of the result's largest magnitude (strict: below 1e-5)."""
    monkeypatch.setenv("NNLAYOUT_ONEDNN_FPMATH", fpmath)
    c, size, o, k, stride, groups = CASES["resnet_3x3"]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, c, size, size)).astype(np.float32)
    w = (rng.standard_normal((o, c, k, k)) / np.sqrt(c * k * k)).astype(np.float32)
    want = window_conv(x.astype(np.float64), w.astype(np.float64), stride, k // 2, groups)
    g = ConvGeometry(x.shape, w.shape, False, want.shape, (1, 1), (1, 1), (1, 1), (1, 1))
    kernel = Bf16Conv(g, w, None, dst_type=b.dnnl_f32, data_type=b.dnnl_f32)
    relative = np.abs(kernel.run_plain(x) - want).max() / np.abs(want).max()
    bf16_code = kernel.implementation.endswith(("_amx", "_bf16"))
    if fpmath == "bf16" and not bf16_code:
        # The mode is a permission: oneDNN v3.2 takes it for f32 convolutions with AMX only,
        # not with AVX512_BF16 alone (AMD Zen 4: brgconv:avx512_core), and then stays f32.
        assert relative < 1e-5, relative
        pytest.skip(f"oneDNN keeps f32 code here ({kernel.implementation}): no AMX")
    if fpmath == "bf16":
        assert 1e-5 < relative < MAX_RELATIVE, relative
    else:
        assert not kernel.implementation.endswith(("_amx", "_bf16")), kernel.implementation
        assert relative < 1e-5, relative


def test_an_unknown_fpmath_is_warned_about(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NNLAYOUT_ONEDNN_FPMATH", "tf32x")
    with pytest.warns(RuntimeWarning, match="not one of strict, bf16"):
        assert float_math() is None


@pytest.mark.parametrize("layout", ["", "NCHW16c"])
@pytest.mark.parametrize("direction", ["f32 -> bf16", "bf16 -> f32"])
def test_the_cast_kernel_is_the_reference_cast(layout: str, direction: str) -> None:
    """cast_onednn (oneDNN's reorder over the physical elements, bound once) writes what the
    reference cast writes, bit for bit (NaN stays NaN), called and bound, into a contiguous
    buffer and, through numpy, into a strided view (a halo's interior); padding lanes (0)
    stay 0. f32 subnormals become zero, as in oneDNN's bf16 kernels."""
    if not b.available():
        pytest.skip("oneDNN is not installed")
    source, result = direction.split(" -> ")
    encoding = f', #layout.layout<"{layout}">' if layout else ""
    module = parse(
        f"""
func.func @f(%x: tensor<1x20x3x3x{source}{encoding}>) -> tensor<1x20x3x3x{result}{encoding}> {{
  %c = nn.cast %x : tensor<1x20x3x3x{source}{encoding}> -> tensor<1x20x3x3x{result}{encoding}>
  func.return %c : tensor<1x20x3x3x{result}{encoding}>
}}"""
    )
    op = next(o for o in module.walk() if isinstance(o, nn.CastOp))
    kernel = registry().lookup("cast_onednn")
    assert kernel.prepare is not None and kernel.implementation(op) == "jit:uni"
    count = buffer_bytes(op.input.type) // (4 if source == "f32" else 2)
    rng = np.random.default_rng(2)
    x = rng.standard_normal(count).astype(np.float32)
    x[:3] = [np.nan, -0.0, np.inf]
    x[3:] *= np.float32(2.0) ** rng.integers(-40, 40, count - 3).astype(np.float32)
    if layout:  # the physical array of the blocked layout, padding lanes (0) included
        x.reshape(1, 2, 3, 3, 16)[:, 1, :, :, 4:] = 0
    if source == "bf16":
        x = x.astype(bf16_dtype())
    want = cast(op, [x])
    bound = kernel.prepare(op, None)
    for run in ("called", "bound"):
        out = np.full(count, 7, dtype=want.dtype)
        if run == "called":
            bound([x], out)
        else:
            bound.on([x], out)()  # type: ignore[attr-defined]
        np.testing.assert_array_equal(out.view(np.uint8), want.view(np.uint8), err_msg=run)
    halo = np.full(count + 8, 7, dtype=want.dtype)
    bound([x], halo[4:-4])  # a strided view: numpy's conversion
    np.testing.assert_array_equal(halo[4:-4].view(np.uint8), want.view(np.uint8))
    if source == "f32":  # a subnormal f32 is 0 in bf16 here (ml_dtypes keeps it)
        tiny = np.full(count, 1e-39, np.float32)
        out = np.empty(count, dtype=want.dtype)
        bound([tiny], out)
        assert not out.astype(np.float32).any()
        bound([tiny], halo[4:-4])  # numpy's conversion makes it 0 too
        assert not halo[4:-4].astype(np.float32).any()
