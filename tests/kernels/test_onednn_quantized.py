"""oneDNN's int8 convolutions (kernels/onednn/quantized.py) against an integer numpy
reference of ONNX's QLinearConv: exact accumulation in int64, then the requantization in
float64 with round half to even and saturation. oneDNN requantizes in f32, so an element
whose exact value lies within f32's rounding error of a half step may round the other way:
those, and only those, may differ, by one step."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn.binding import MemoryDesc
from nnlayout.kernels.onednn.common import reorder_array
from nnlayout.kernels.onednn.convolution import ConvGeometry
from nnlayout.kernels.onednn.quantized import (
    ANY,
    NCHW,
    VNNI_1X1,
    VNNI_DIRECT,
    QConv,
    QConvParams,
    QuantParams,
    first_qconv_pd,
    implementation_refusal,
    multiplier_post_ops,
    preferred_implementation,
    qconv_pd_at,
    qconv_refusal,
)

pytestmark = [
    pytest.mark.onednn,
    pytest.mark.skipif(
        not (b.available() and b.runs_vnni()),
        reason="oneDNN's int8 code here has no VNNI or AMX (its kernels refuse it)",
    ),
]


def integer_conv(
    x: np.ndarray, w: np.ndarray, x_zp: int, stride: int, pad: int, groups: int
) -> np.ndarray:
    """sum((x - x_zp) * w) over each window, exactly (int64), padding x - x_zp with 0."""
    return window_conv(x.astype(np.int64) - x_zp, w.astype(np.int64), stride, pad, groups)


def window_conv(x: np.ndarray, w: np.ndarray, stride: int, pad: int, groups: int) -> np.ndarray:
    """The convolution of NCHW `x` with OIHW `w` in their dtype, padding x with 0."""
    n, _, h, width = x.shape
    o, cg, kh, kw = w.shape
    shifted = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (width + 2 * pad - kw) // stride + 1
    view = sliding_window_view(shifted, (kh, kw), axis=(2, 3))[:, :, ::stride, ::stride]
    cols = view[:, :, :oh, :ow].transpose(0, 1, 4, 5, 2, 3).reshape(n, groups, -1, oh * ow)
    weights = w.reshape(groups, o // groups, cg * kh * kw)
    return np.matmul(weights, cols).reshape(n, o, oh, ow)


def requantized(acc: np.ndarray, params: QuantParams, dtype: type) -> tuple[np.ndarray, np.ndarray]:
    """ONNX's y from the accumulator (bias included), and the exact value before rounding."""
    scale = np.float64(params.x_scale) * np.asarray(params.w_scale, np.float64)
    exact = acc * (scale / np.float64(params.y_scale)).reshape(1, -1, 1, 1)
    info = np.iinfo(dtype)
    y = np.clip(np.rint(exact + params.y_zero_point), info.min, info.max).astype(dtype)
    return y, exact


# (channels in, size, channels out, kernel, stride, groups, source type, x_zp): ResNet-50's
# 3x3, 1x1 and strided convolutions, its stem, MobileNetV2's depthwise and pointwise ones.
CASES = {
    "resnet_3x3_u8_zp": (64, 56, 64, 3, 1, 1, np.uint8, 128),
    "resnet_1x1_u8": (256, 28, 64, 1, 1, 1, np.uint8, 0),
    "resnet_stem_u8_zp": (3, 64, 64, 7, 2, 1, np.uint8, 114),
    "resnet_3x3_s2_s8_zp": (128, 28, 128, 3, 2, 1, np.int8, -5),
    "resnet_1x1_expand_s8": (64, 28, 256, 1, 1, 1, np.int8, 0),
    "mobilenet_depthwise_u8_zp": (32, 28, 32, 3, 1, 32, np.uint8, 3),
    "mobilenet_depthwise_s2_s8": (96, 28, 96, 3, 2, 96, np.int8, 0),
    "grouped_u8_zp": (64, 14, 64, 3, 1, 4, np.uint8, 17),
    "mobilenet_1x1_expand_56_u8": (24, 56, 144, 1, 1, 1, np.uint8, 0),
    "mobilenet_1x1_project_56_u8": (144, 56, 24, 1, 1, 1, np.uint8, 0),
    "mobilenet_depthwise_56_u8": (32, 56, 32, 3, 1, 32, np.uint8, 0),
}


def _case(
    name: str, seed: int = 0
) -> tuple[QConvParams, np.ndarray, np.ndarray, np.ndarray, QuantParams, int, int, int]:
    c, size, o, k, stride, groups, x_type, x_zp = CASES[name]
    rng = np.random.default_rng(seed)
    info = np.iinfo(x_type)
    x = rng.integers(info.min, info.max + 1, (1, c, size, size)).astype(x_type)
    w = rng.integers(-127, 128, (o, c // groups, k, k)).astype(np.int8)
    bias = rng.integers(-20000, 20000, o).astype(np.int32)
    w_scale = tuple(float(s) for s in rng.uniform(0.002, 0.02, o).astype(np.float32))
    pad = k // 2
    acc = integer_conv(x, w, x_zp, stride, pad, groups) + bias.reshape(1, o, 1, 1)
    real = acc * 0.02 * np.asarray(w_scale).reshape(1, o, 1, 1)
    # y's scale and zero point as a calibration would choose them: the range onto u8.
    y_scale = float(np.float32((real.max() - real.min()) / 255))
    y_zp = int(np.clip(round(-real.min() / y_scale), 0, 255))
    params = QuantParams(0.02, w_scale, y_scale, x_zp, y_zp)
    weights = w if groups == 1 else w.reshape(groups, o // groups, c // groups, k, k)
    role = "weights" if groups == 1 else "depthwise" if o == groups == c else "grouped"
    out = acc.shape[2]
    g = ConvGeometry(
        (1, c, size, size),
        weights.shape,
        True,
        (1, o, out, out),
        (stride, stride),
        (1, 1),
        (pad, pad),
        (pad, pad),
        role,
    )
    src_type = b.dnnl_u8 if x_type == np.uint8 else b.dnnl_s8
    q = QConvParams(g, src_type, b.dnnl_u8, True, x_zp != 0, True)
    return q, x, weights, bias, params, stride, pad, groups


@pytest.mark.parametrize("name", sorted(CASES))
def test_int8_convolution_matches_the_integer_reference(name: str) -> None:
    q, x, weights, bias, params, stride, pad, groups = _case(name)
    kernel = QConv(q, weights, bias, params)
    got = kernel.run_plain(x)
    w = weights.reshape(-1, *weights.shape[-3:])
    acc = integer_conv(x, w, params.x_zero_point, stride, pad, groups)
    want, exact = requantized(acc + bias.reshape(1, -1, 1, 1), params, np.uint8)
    assert 0.05 < np.mean(want) / 255 < 0.95 and np.mean((want == 0) | (want == 255)) < 0.05
    differ = got != want
    assert np.abs(got.astype(int) - want.astype(int)).max(initial=0) <= 1
    # Only elements at a half step, to f32's precision, round the other way.
    distance = np.abs(np.abs(exact - np.floor(exact)) - 0.5)[differ]
    assert np.all(distance < 1e-4 * np.maximum(1, np.abs(exact[differ]))), distance
    assert differ.mean() < 1e-3


@pytest.mark.parametrize("name", sorted(CASES))
def test_int8_convolutions_run_vnni_or_amx_code(name: str) -> None:
    q, _, weights, bias, params, *_ = _case(name)
    implementation = QConv(q, weights, bias, params).implementation
    assert not implementation.startswith("ref")
    assert "vnni" in implementation or "amx" in implementation, implementation


def test_vnni_replaces_amx_jit_1x1_and_from_56x56_pixels_brdgmm() -> None:
    """The measured rule (`preferred_implementation`): oneDNN's AMX jit_1x1 code gives way to
    its VNNI jit_int8_1x1 code at every size; its brdgmm depthwise code to its jit_int8 code
    on 56x56 outputs and larger, not below; its AMX brgconv_1x1 code to jit_int8 only where
    fewer than 64 output channels are not a multiple of 16; nothing else is replaced (AMX brgconv_1x1,
    what ResNet-50's 1x1 convolutions run, stays)."""
    q = _case("mobilenet_1x1_expand_56_u8")[0]
    at_28 = replace(
        q,
        geometry=replace(q.geometry, src=(1, 24, 28, 28), dst=(1, 144, 28, 28)),
    )
    for size in (q, at_28):
        assert preferred_implementation(size, "jit_1x1:avx512_core_amx") == VNNI_1X1
    assert preferred_implementation(q, "brdgmm_dw:avx512_core_vnni") == VNNI_DIRECT
    assert preferred_implementation(at_28, "brdgmm_dw:avx512_core_vnni") is None
    for other in ("brgconv_1x1:avx512_core_amx", "jit:avx512_core_amx", VNNI_1X1, VNNI_DIRECT):
        assert preferred_implementation(q, other) is None
        assert preferred_implementation(at_28, other) is None
    for channels, taken in (
        (24, VNNI_DIRECT),
        (40, VNNI_DIRECT),
        (32, None),
        (256, None),
        (1000, None),  # a partial tile, but a small share of the work
    ):
        projection = replace(
            q, geometry=replace(q.geometry, dst=(1, channels, *q.geometry.dst[2:]))
        )
        assert preferred_implementation(projection, "brgconv_1x1:avx512_core_amx") == taken


@pytest.mark.parametrize(
    ("name", "first_choice", "taken"),
    [
        ("mobilenet_1x1_expand_56_u8", "jit_1x1:avx512_core_amx", VNNI_1X1),
        ("mobilenet_depthwise_56_u8", "brdgmm_dw:avx512_core_vnni", VNNI_DIRECT),
        ("mobilenet_1x1_project_56_u8", "brgconv_1x1:avx512_core_amx", VNNI_DIRECT),
    ],
)
def test_the_preferred_implementation_is_what_binds(
    name: str, first_choice: str, taken: str
) -> None:
    """Where oneDNN's first choice is the one replaced (AMX jit_1x1 on AMX machines, which
    oneDNN picks where a side has a zero point, else its brgconv_1x1, replaced where the
    output channels are not a multiple of 16; brdgmm_dw, which it picks where neither side
    has one, as around MobileNetV2's ReLU6), the kernel runs the replacement on the same
    nhwc source and destination, the
    choice dispatch plans with (its formats and packed bytes) is the bound primitive's, also
    after oneDNN's primitive cache holds the convolution, and its results are the first
    choice's but for elements at a half step."""
    from nnlayout.kernels.onednn.quantized_kernels import qconv_choice

    q, x, weights, bias, params, *_ = _case(name)
    if first_choice.startswith(("brdgmm", "brgconv")):  # half the real range onto u8 from 0
        q = replace(q, dst_zero_point=False)
        params = replace(params, y_scale=params.y_scale / 2, y_zero_point=0)
    first = first_qconv_pd(q, ANY, ANY, ANY)
    if not first.implementation.startswith(first_choice):
        pytest.skip(f"oneDNN's first choice here is {first.implementation}, not {first_choice}")
    choice = qconv_choice(q)
    assert not isinstance(choice, str)
    for _ in range(2):  # the second after the primitive is in oneDNN's cache
        kernel = QConv(q, weights, bias, params, (choice.src.value, ANY, choice.dst.value))
        assert kernel.implementation == choice.implementation == taken
        assert kernel.src_md == first.md(b.dnnl_query_src_md)
        assert kernel.dst_md == first.md(b.dnnl_query_dst_md)
        assert kernel.packed_bytes == choice.packed
    got = kernel.run_plain(x).astype(int)
    unchanged = QConv(q, weights, bias, params, pd=first)  # oneDNN's first choice, as given
    assert unchanged.implementation == first.implementation
    want = unchanged.run_plain(x).astype(int)
    assert np.mean(want > 0) > 0.3 and np.mean(want == 255) < 0.05
    assert np.abs(got - want).max() <= 1 and np.mean(got != want) < 1e-3


def test_a_halo_holds_the_zero_point() -> None:
    """The trap: an asymmetric u8 tensor's padding is its zero point, not 0. A source equal
    to x_zp everywhere is real 0, so every output, border pixels included, is the bias
    alone."""
    q, x, weights, bias, params, *_ = _case("resnet_3x3_u8_zp")
    kernel = QConv(q, weights, bias, params)
    got = kernel.run_plain(np.full_like(x, params.x_zero_point))
    want, _ = requantized(
        np.broadcast_to(bias.reshape(1, -1, 1, 1).astype(np.int64), got.shape), params, np.uint8
    )
    np.testing.assert_array_equal(got, want)


def test_packed_weights_count_the_compensation() -> None:
    """A u8 source with a zero point needs its compensation (per output channel s32 sums)
    after the packed weights: the packed bytes count them."""
    q, _, weights, bias, params, *_ = _case("resnet_3x3_u8_zp")
    kernel = QConv(q, weights, bias, params)
    assert kernel.packed_bytes >= weights.nbytes + 4 * weights.shape[0]
    assert kernel.packed_bytes == kernel.pd.md(b.dnnl_query_weights_md).size


def test_what_onednn_refuses_is_named() -> None:
    zero = np.zeros(4, np.int8)
    assert qconv_refusal(np.uint8, np.int8, zero, 1, 1) is None
    assert qconv_refusal(np.int8, np.int8, zero, 1, 1) is None
    assert "weights have a zero point" in qconv_refusal(np.uint8, np.int8, zero + 1, 1, 1)
    assert "per-channel zero point" in qconv_refusal(np.uint8, np.int8, zero, 4, 1)
    assert "per-channel zero point" in qconv_refusal(np.uint8, np.int8, zero, 1, 4)
    assert "take u8 or s8" in qconv_refusal(np.uint16, np.int8, zero, 1, 1)
    assert "take s8" in qconv_refusal(np.uint8, np.uint8, zero, 1, 1)


@pytest.mark.parametrize("clamp", [(0, None), (-10, 50), (None, 20)])
def test_a_clamp_is_a_post_op(clamp: tuple[int | None, int | None]) -> None:
    """nn.qconv2d's clamp_min/clamp_max (a fused Relu: clamp_min = y_zp; a Clip) as a clip
    post-op on the rounded value less y_zp, after the multiplier post-op: the result is the
    unclamped one clamped, exactly."""
    q, x, weights, bias, params, stride, pad, groups = _case("resnet_3x3_u8_zp")
    low, high = (None if c is None else params.y_zero_point + c for c in clamp)
    post_ops = multiplier_post_ops(q.geometry.dst, params.y_zero_point, low, high)
    clamped = replace(q, geometry=replace(q.geometry, post_ops=post_ops), multiplied=True)
    got = QConv(clamped, weights, bias, params).run_plain(x)
    acc = integer_conv(x, weights, params.x_zero_point, stride, pad, groups)
    want, _ = requantized(acc + bias.reshape(1, -1, 1, 1), params, np.uint8)
    want = np.clip(want, 0 if low is None else low, 255 if high is None else high)
    assert np.abs(got.astype(int) - want).max() <= 1 and np.mean(got != want) < 1e-3
    assert got.min() == (want.min()) and got.max() == want.max()


_CHECK_ALL = """
import numpy as np
from nnlayout.kernels.onednn.bf16 import bf16_refusal
from nnlayout.kernels.onednn.quantized import pd_refusal
from nnlayout.tests.kernels.test_onednn_quantized import (
    CASES, QConv, _case, integer_conv, requantized)
for name in sorted(CASES):
    q, x, weights, bias, params, stride, pad, groups = _case(name)
    kernel = QConv(q, weights, bias, params)
    w = weights.reshape(-1, *weights.shape[-3:])
    acc = integer_conv(x, w, params.x_zero_point, stride, pad, groups)
    want, _ = requantized(acc + bias.reshape(1, -1, 1, 1), params, np.uint8)
    got = kernel.run_plain(x)
    worst, count = np.abs(got.astype(int) - want).max(), (got != want).sum()
    print(name, kernel.implementation, worst, count, pd_refusal(q) is None)
print("bf16:", bf16_refusal())
"""


def _capped(cap: str) -> list[str]:
    """The lines `_CHECK_ALL` prints where oneDNN is capped to the instruction set `cap`."""
    import os
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _CHECK_ALL],
        capture_output=True,
        text=True,
        env=dict(os.environ, ONEDNN_MAX_CPU_ISA=cap),
        check=True,
    )
    lines = done.stdout.splitlines()
    assert len(lines) == len(CASES) + 1, done.stdout + done.stderr
    assert lines[-1].startswith("bf16: the CPU has no AVX512_BF16"), lines[-1]
    return lines[:-1]


def test_int8_convolutions_on_vnni_without_amx() -> None:
    """Where oneDNN runs VNNI code without AMX (s8 sources shifted by 128, with the
    compensation packed after the weights), every case is within one step, nearly all
    exact, and accepted; bf16 is refused there with the reason."""
    for line in _capped("AVX512_CORE_VNNI"):
        name, implementation, worst, count, accepted = line.split()
        assert "vnni" in implementation, line
        assert int(worst) <= 1 and int(count) <= 25, line
        assert accepted == "True", line


def test_int8_convolutions_without_vnni_are_refused() -> None:
    """The trap: oneDNN's int8 code for CPUs without VNNI (here capped to avx2) sums pairs
    of u8 x s8 products in 16 bits, which saturate with full-range weights: results many
    steps off. Dispatch refuses it (`implementation_refusal`), naming why."""
    lines = _capped("AVX2")
    wrong = [line for line in lines if int(line.split()[2]) > 1]
    assert wrong, lines  # the trap is real
    assert all(line.split()[4] == "False" for line in lines), lines


def test_the_refusal_of_code_without_vnni_says_why() -> None:
    assert implementation_refusal("jit:avx512_core_amx") is None
    assert implementation_refusal("brgconv:avx512_core_vnni") is None
    assert implementation_refusal("jit_uni_int8:avx2_vnni") is None
    assert "saturate" in implementation_refusal("jit_uni_int8:avx2")
    assert "saturate" in implementation_refusal("x64:gemm_s8u8s32:jit")
    assert "only ref:any" in implementation_refusal("ref:any")


def test_a_residual_add_is_a_sum_post_op() -> None:
    """QLinearAdd(QLinearConv(x), r) fused: the destination holds r (u8, its own scale and
    zero point) and the sum post-op adds (r - r_zp) * r_scale to the real convolution before
    y's requantization: one rounding instead of two, so within one step of the unfused
    reference (and of the exact real sum)."""
    q, x, weights, bias, params, stride, pad, groups = _case("resnet_1x1_u8")
    r_scale, r_zp = 0.07, 90
    post_ops = (b.PostOp.sum(r_scale, r_zp, b.dnnl_data_type_undef),)
    kernel = QConv(
        replace(q, geometry=replace(q.geometry, post_ops=post_ops)), weights, bias, params
    )
    residual = np.random.default_rng(9).integers(0, 256, q.geometry.dst).astype(np.uint8)
    out = reorder_array(
        residual, MemoryDesc.with_tag(q.geometry.dst, NCHW, b.dnnl_u8), kernel.dst_md
    )
    src = reorder_array(x, MemoryDesc.with_tag(q.geometry.src, NCHW, b.dnnl_u8), kernel.src_md)
    kernel(src, out)
    plain = MemoryDesc.with_tag(q.geometry.dst, NCHW, b.dnnl_u8)
    got = reorder_array(out, kernel.dst_md, plain).reshape(q.geometry.dst)
    acc = integer_conv(x, weights, params.x_zero_point, stride, pad, groups)
    acc = acc + bias.reshape(1, -1, 1, 1)
    real = acc * (np.float64(params.x_scale) * np.asarray(params.w_scale).reshape(1, -1, 1, 1))
    real += (residual.astype(np.float64) - r_zp) * r_scale
    want = np.clip(np.rint(real / params.y_scale) + params.y_zero_point, 0, 255)
    assert np.mean((want == 0) | (want == 255)) < 0.2
    assert np.abs(got.astype(int) - want).max() <= 1 and np.mean(got != want) < 1e-3


def test_a_descriptor_at_another_implementation_is_the_one_run() -> None:
    """`QConv(pd=...)` runs the descriptor given (`qconv_pd_at`'s: the benchmarks' way to
    time each of oneDNN's implementations); `qconv_pd_at` finds none that oneDNN does not
    list."""
    q, x, weights, bias, params, *_ = _case("resnet_1x1_u8")
    assert qconv_pd_at(q, "no_such_code") is None
    first = first_qconv_pd(q, ANY, ANY, ANY)
    at = qconv_pd_at(q, first.implementation)
    assert at is not None
    kernel = QConv(q, weights, bias, params, pd=at)
    assert kernel.pd is at and kernel.implementation == first.implementation
    want = QConv(q, weights, bias, params).run_plain(x)
    np.testing.assert_array_equal(kernel.run_plain(x), want)


@pytest.mark.slow
def test_the_int8_implementations_benchmark_marks_both_choices(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`benchmarks/int8_implementations` lists, per int8 convolution, oneDNN's fast exact
    implementations with its first (*) and the kernels' (>) choice marked, and totals."""
    from nnlayout.benchmarks import int8_implementations
    from nnlayout.benchmarks.startup import THREAD_VARIABLES

    for variable in THREAD_VARIABLES:
        monkeypatch.setenv(variable, "1")  # restored after the test (main pins them)
    assert int8_implementations.main(["mobilenet_v2", "--small", "--repeats", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split(": ", 1)[1].split("  ") for line in lines if " x " in line]
    assert len(rows) > 5
    for cells in rows:
        assert len([cell for cell in cells if cell.startswith("*")]) == 1, cells
        assert len([cell for cell in cells if cell.lstrip("*").startswith(">")]) == 1, cells
        assert not any("ref:" in cell for cell in cells), cells
    assert lines[-1].startswith("total, ms: oneDNN's first, cold ")
    with pytest.raises(SystemExit) as refused:  # a usage error (benchmarks/startup.py)
        int8_implementations.main(["no_such_model"])
    assert refused.value.code == 2
    assert "unknown model(s) no_such_model" in capsys.readouterr().err
