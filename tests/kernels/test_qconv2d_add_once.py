"""`nn.qconv2d_add` without c (what fold-qdq makes of torch's x86 residual blocks): the
convolution's real result plus the dequantized addend, quantized once. The reference kernel
is that formula (checked against float64 arithmetic written here from the definition); the
oneDNN kernel (y's multipliers, the add as a `sum` post-op, the clamp after it) is within
one step of it and exact on nearly every value, with the zero points of x, the addend and
the result all non-zero, an i32 or an f32 bias, a Relu's or a Clip's clamp, strides,
groups and saturation."""

from __future__ import annotations

import numpy as np
import pytest

from nnlayout.dialects import nn
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn.quantized_kernels import prepare_qconv
from nnlayout.kernels.reference_quantized import qconv2d_add
from nnlayout.tests.helpers import DEFAULT_PIPELINE, compile_module, parse

VNNI = b.available() and b.runs_vnni()
C = 16
TEXT = """
func.func @f(%x: tensor<1x{c}x9x9x{t}>, %w: tensor<{c}x{cg}x3x3xi8>, %b: tensor<{c}x{bt}>,
             %r: tensor<1x{c}x{s}x{s}x{t}>) -> tensor<1x{c}x{s}x{s}x{t}> {{
  %y = nn.qconv2d_add %x, %w, %b add %r strides [{stride}, {stride}] pads [1, 1, 1, 1]
      dilations [1, 1] groups {groups} {{{clamp}{params}}}
      : (tensor<1x{c}x9x9x{t}>, tensor<{c}x{cg}x3x3xi8>, tensor<{c}x{bt}>,
         tensor<1x{c}x{s}x{s}x{t}>) -> tensor<1x{c}x{s}x{s}x{t}>
  func.return %y : tensor<1x{c}x{s}x{s}x{t}>
}}
"""


def _q(prefix: str, scale: float, zero_point: int, t: str) -> str:
    return (
        f"{prefix}_scale = dense<{scale}> : tensor<f32>, "
        f"{prefix}_zero_point = dense<{zero_point}> : tensor<{t}>"
    )


def _text(t: str, bias_type: str, groups: int, stride: int, clamp: str, y_scale: float) -> str:
    zp = (lambda v: v) if t == "ui8" else (lambda v: v - 128)
    params = ", ".join(
        [
            _q("x", 0.02, zp(140), t),
            f"w_scale = dense<{[0.004 + 0.0001 * i for i in range(C)]}> : tensor<{C}xf32>",
            f"w_zero_point = dense<0> : tensor<{C}xi8>",
            _q("r", 0.045, zp(125), t),
            _q("y", y_scale, zp(60), t),
        ]
    )
    s = (9 + 2 - 3) // stride + 1
    return TEXT.format(
        c=C, cg=C // groups, s=s, t=t, bt=bias_type, stride=stride, groups=groups,
        clamp=clamp, params=params,
    )  # fmt: skip


def _by_definition(
    op: nn.QConv2dAddOp, x: np.ndarray, w: np.ndarray, bias: np.ndarray, r: np.ndarray
) -> np.ndarray:
    """quantize_y(conv(dequantize(x), dequantize(w)) + bias * x_scale * w_scale +
    dequantize(r)), clamped: float64 loops over the window, the padding a real 0."""
    xp, wp, rp, yp = (op.qparams(p) for p in "xwry")
    real_x = np.pad(
        (x.astype(np.float64) - int(xp.zero_point)) * float(xp.scale),
        ((0, 0), (0, 0), (1, 1), (1, 1)),
    )
    w_scale = wp.scale.astype(np.float64)
    real_w = w.astype(np.float64) * w_scale.reshape(-1, 1, 1, 1)
    stride, groups = nn.ints(op.strides)[0], op.groups.value.data
    out = r.astype(np.float64)
    n, o, s, _ = out.shape
    cg, per_group = w.shape[1], o // groups
    result = np.zeros(out.shape)
    for oc in range(o):
        g = oc // per_group
        for i in range(3):
            for j in range(3):
                window = real_x[
                    0,
                    g * cg : (g + 1) * cg,
                    i : i + stride * s : stride,
                    j : j + stride * s : stride,
                ]
                result[0, oc] += np.tensordot(real_w[oc, :, i, j], window, axes=1)
    result += (bias.astype(np.float64) * float(xp.scale) * w_scale).reshape(1, -1, 1, 1)
    result += (out - int(rp.zero_point)) * float(rp.scale)
    info = np.iinfo(x.dtype)
    quantized = np.clip(np.rint(result / float(yp.scale)) + int(yp.zero_point), info.min, info.max)
    low, high = op.clamp_limits(yp.element_type)
    return np.clip(quantized, low, high).astype(x.dtype)


CASES = [
    ("ui8", "i32", 1, 1, "clamp_min = 60 : i64, ", 0.05),  # a Relu: the clamp at y's zero point
    ("ui8", "f32", 1, 2, "", 0.02),  # saturates on some values
    ("i8", "f32", 4, 1, "clamp_min = -90 : i64, clamp_max = 20 : i64, ", 0.05),  # a Clip
    ("ui8", "i32", 16, 2, "clamp_min = 60 : i64, ", 0.05),  # depthwise
]


@pytest.mark.parametrize(("t", "bias_type", "groups", "stride", "clamp", "y_scale"), CASES)
def test_one_rounding_by_definition_and_on_onednn(
    t: str, bias_type: str, groups: int, stride: int, clamp: str, y_scale: float
) -> None:
    module = parse(_text(t, bias_type, groups, stride, clamp, y_scale))
    op = next(o for o in module.walk() if isinstance(o, nn.QConv2dAddOp))
    assert op.rounds_once
    rng = np.random.default_rng(groups + stride)
    dtype = np.uint8 if t == "ui8" else np.int8
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max + 1, (1, C, 9, 9)).astype(dtype)
    w = rng.integers(-127, 128, (C, C // groups, 3, 3)).astype(np.int8)
    bias = rng.integers(-3000, 3000, C).astype(np.int32)
    if bias_type == "f32":
        bias = (bias + rng.uniform(-0.5, 0.5, C)).astype(np.float32)
    r = rng.integers(info.min, info.max + 1, nn.shape_of(op.addend)).astype(dtype)
    want = _by_definition(op, x, w, bias, r)
    got = qconv2d_add(op, [x, w, bias, r])
    assert np.abs(got.astype(int) - want.astype(int)).max() <= 1  # f32 scales' products
    assert np.mean(got == want) > 0.99
    saturated = np.mean((want == info.min) | (want == info.max))
    if y_scale == 0.02:
        assert saturated > 0.01
    if not VNNI:
        return
    planned = compile_module(module, "onednn", False, DEFAULT_PIPELINE)
    fused = next(o for o in planned.walk() if isinstance(o, nn.QConv2dAddOp))
    kernel = prepare_qconv(fused)  # NHWC source, addend and result
    out = np.empty(want.transpose(0, 2, 3, 1).shape, dtype)
    nhwc = (np.ascontiguousarray(a.transpose(0, 2, 3, 1)) for a in (x, r))
    source, addend = nhwc
    kernel([source, w, bias, addend], out)
    onednn = out.transpose(0, 3, 1, 2)
    difference = np.abs(onednn.astype(int) - got.astype(int))
    assert difference.max() <= 1
    assert np.mean(difference == 0) > 0.99
