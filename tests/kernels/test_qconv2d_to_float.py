"""`nn.qconv2d_to_float` (what fold-qdq makes of dequantize -> Conv whose result stays
float): the reference kernel is the convolution of the dequantized values plus the real
bias (checked against float64 arithmetic from the definition), and every target, padding
on and off, interpreter and generated module, gives it within f32 rounding, oneDNN's int8
convolution writing f32 where it runs: x's zero point not 0, per-channel weight scales,
an i32 or f32 bias or none, strides, groups, and a squeeze-and-excitation's one pixel."""

from __future__ import annotations

import numpy as np
import pytest

from nnlayout.dialects import nn
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.reference_quantized import qconv2d_to_float
from nnlayout.tests.helpers import chosen_kernels, everywhere, parse

VNNI = b.available() and b.runs_vnni()
TEXT = """
func.func @f(%x: tensor<1x{c}x{s}x{s}x{t}>, %w: tensor<{o}x{cg}x{k}x{k}xi8>{bias_arg})
    -> tensor<1x{o}x{r}x{r}xf32> {{
  %y = nn.qconv2d_to_float %x, %w{bias} strides [{stride}, {stride}] pads [{p}, {p}, {p}, {p}]
      dilations [1, 1] groups {groups} {{{params}}}
      : (tensor<1x{c}x{s}x{s}x{t}>, tensor<{o}x{cg}x{k}x{k}xi8>{bias_type})
      -> tensor<1x{o}x{r}x{r}xf32>
  func.return %y : tensor<1x{o}x{r}x{r}xf32>
}}
"""

CASES = [
    # t, channels in/out, size, kernel, stride, groups, bias type ("" none)
    ("ui8", 16, 16, 9, 3, 1, 1, "f32"),
    ("ui8", 16, 32, 9, 3, 2, 1, "i32"),
    ("i8", 16, 16, 8, 3, 1, 16, "f32"),  # depthwise
    ("ui8", 32, 8, 1, 1, 1, 1, "f32"),  # one pixel: a squeeze-and-excitation's
    ("ui8", 16, 24, 7, 1, 1, 1, ""),
]


def _module(t: str, c: int, o: int, s: int, k: int, stride: int, groups: int, bt: str) -> object:
    p = k // 2
    r = (s + 2 * p - k) // stride + 1
    zp = 140 if t == "ui8" else -20
    scales = [round(0.004 + 0.0003 * i, 6) for i in range(o)]
    params = (
        f"x_scale = dense<0.02> : tensor<f32>, x_zero_point = dense<{zp}> : tensor<{t}>, "
        f"w_scale = dense<{scales}> : tensor<{o}xf32>, w_zero_point = dense<0> : tensor<{o}xi8>"
    )
    return parse(
        TEXT.format(
            c=c,
            o=o,
            cg=c // groups,
            s=s,
            k=k,
            r=r,
            t=t,
            stride=stride,
            p=p,
            groups=groups,
            params=params,
            bias_arg=f", %b: tensor<{o}x{bt}>" if bt else "",
            bias=", %b" if bt else "",
            bias_type=f", tensor<{o}x{bt}>" if bt else "",
        )  # fmt: skip
    )


def _by_definition(op: nn.QConv2dToFloatOp, x: np.ndarray, w: np.ndarray, bias: list) -> np.ndarray:
    """conv(dequantize(x), dequantize(w)) + bias * x_scale * w_scale, float64 loops over
    the window, the padding a real 0."""
    xp, wp = op.qparams("x"), op.qparams("w")
    p, stride, groups = nn.ints(op.pads)[0], nn.ints(op.strides)[0], op.groups.value.data
    real_x = (x.astype(np.float64) - int(xp.zero_point)) * float(xp.scale)
    real_x = np.pad(real_x, ((0, 0), (0, 0), (p, p), (p, p)))
    w_scale = np.broadcast_to(wp.scale.astype(np.float64), (w.shape[0],))
    real_w = w.astype(np.float64) * w_scale.reshape(-1, 1, 1, 1)
    o, cg, k, _ = w.shape
    r = nn.shape_of(op.output)[2]
    result = np.zeros((1, o, r, r))
    for oc in range(o):
        g = oc // (o // groups)
        for i in range(k):
            for j in range(k):
                rows = slice(i, i + stride * r, stride)
                cols = slice(j, j + stride * r, stride)
                window = real_x[0, g * cg : (g + 1) * cg, rows, cols]
                result[0, oc] += np.tensordot(real_w[oc, :, i, j], window, axes=1)
    if bias:
        real_bias = bias[0].astype(np.float64) * float(xp.scale) * w_scale
        result += real_bias.reshape(1, -1, 1, 1)
    return result


@pytest.mark.parametrize(("t", "c", "o", "s", "k", "stride", "groups", "bt"), CASES)
def test_qconv2d_to_float_everywhere(
    t: str, c: int, o: int, s: int, k: int, stride: int, groups: int, bt: str
) -> None:
    module = _module(t, c, o, s, k, stride, groups, bt)
    op = next(x for x in module.walk() if isinstance(x, nn.QConv2dToFloatOp))  # type: ignore[attr-defined]
    rng = np.random.default_rng(c + o + k)
    dtype = np.uint8 if t == "ui8" else np.int8
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max + 1, (1, c, s, s)).astype(dtype)
    w = rng.integers(-127, 128, (o, c // groups, k, k)).astype(np.int8)
    bias = []
    if bt:
        values = rng.integers(-3000, 3000, o)
        bias = [values.astype(np.int32) if bt == "i32" else (values + 0.25).astype(np.float32)]
    want = _by_definition(op, x, w, bias)
    reference = qconv2d_to_float(op, [x, w, *bias])
    assert reference.dtype == np.float32
    np.testing.assert_allclose(reference, want, rtol=1e-6, atol=1e-6 * np.abs(want).max())
    for target, padding, compiled, (got,) in everywhere(module, [x, w, *bias]):
        where = f"{target}, padding {padding}"
        scale = np.abs(reference).max()
        np.testing.assert_allclose(got, reference, rtol=1e-5, atol=1e-6 * scale, err_msg=where)
        if target == "onednn" and VNNI:
            assert chosen_kernels(compiled, nn.QConv2dToFloatOp) == {"qconv2d_to_float_onednn"}
