"""`nn.qresize` (a linear resize of quantized data, what fold-qdq makes of dequantize ->
linear Resize -> quantize): the reference kernel is the float ops' arithmetic, quantized once
(checked against float64 arithmetic written here from ONNX's half_pixel formula); every
target, padding on and off, interpreter and generated module, is within one step of it and
exact on nearly every value, where x's and y's parameters are equal (oneDNN's resampling of
the integers) and where they differ (a linear post-op), u8 and s8, up- and downsampling.
A resize oneDNN maps otherwise (align_corners) runs the reference kernel, with the reason."""

from __future__ import annotations

import numpy as np
import pytest

from nnlayout.dialects import nn
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.reference_quantized import qresize
from nnlayout.tests.helpers import chosen_kernels, compile_module, everywhere, parse

ONEDNN = b.available()
TEXT = """
func.func @f(%x: tensor<1x3x{h}x{w}x{t}>) -> tensor<1x3x{oh}x{ow}x{t}> {{
  %y = nn.qresize %x mode "linear" coordinates "{coordinates}" nearest "floor"
      scales [{sh}, {sw}] {{{params}}} : tensor<1x3x{h}x{w}x{t}> -> tensor<1x3x{oh}x{ow}x{t}>
  func.return %y : tensor<1x3x{oh}x{ow}x{t}>
}}
"""


def _q(prefix: str, scale: float, zero_point: int, t: str) -> str:
    return (
        f"{prefix}_scale = dense<{scale}> : tensor<f32>, "
        f"{prefix}_zero_point = dense<{zero_point}> : tensor<{t}>"
    )


def _module(
    t: str,
    hw: tuple[int, int],
    out: tuple[int, int],
    y: tuple[float, int],
    coordinates: str = "half_pixel",
) -> object:
    params = f"{_q('x', 0.05, 17 if t == 'ui8' else -20, t)}, {_q('y', *y, t)}"
    text = TEXT.format(
        t=t, h=hw[0], w=hw[1], oh=out[0], ow=out[1], sh=out[0] / hw[0], sw=out[1] / hw[1],
        coordinates=coordinates, params=params,
    )  # fmt: skip
    return parse(text)


def _half_pixel(x: np.ndarray, out: tuple[int, int], x_scale: float, x_zp: int) -> np.ndarray:
    """ONNX's linear half_pixel resize of x's real values, in float64: each output index o
    reads (o + 0.5) / scale - 0.5, clamped to the axis, between its floor and the next."""
    real = (x.astype(np.float64) - x_zp) * x_scale
    for axis, size in ((2, out[0]), (3, out[1])):
        n = real.shape[axis]
        coordinate = np.clip((np.arange(size) + 0.5) * n / size - 0.5, 0, n - 1)
        low = np.floor(coordinate).astype(int)
        high = np.minimum(low + 1, n - 1)
        weight = (coordinate - low).reshape([-1 if a == axis else 1 for a in range(4)])
        real = np.take(real, low, axis) * (1 - weight) + np.take(real, high, axis) * weight
    return real


CASES = [
    ("ui8", (7, 7), (28, 28), (0.05, 17)),  # x's parameters: oneDNN resamples the integers
    ("ui8", (7, 9), (56, 36), (0.02, 100)),  # other parameters: saturates on some values
    ("i8", (6, 6), (24, 24), (0.07, -5)),
    ("ui8", (16, 16), (8, 8), (0.05, 17)),  # downsampling
]


@pytest.mark.parametrize(("t", "hw", "out", "y"), CASES)
def test_qresize_on_every_target(
    t: str, hw: tuple[int, int], out: tuple[int, int], y: tuple[float, int]
) -> None:
    module = _module(t, hw, out, y)
    dtype = np.uint8 if t == "ui8" else np.int8
    info = np.iinfo(dtype)
    x = np.random.default_rng(hw[0]).integers(info.min, info.max + 1, (1, 3, *hw)).astype(dtype)
    op = next(o for o in module.walk() if isinstance(o, nn.QResizeOp))  # type: ignore[attr-defined]
    want = _half_pixel(x, out, 0.05, int(op.qparams("x").zero_point))
    by_definition = np.clip(np.rint(want / y[0]) + y[1], info.min, info.max)
    reference = qresize(op, [x])
    assert np.abs(reference.astype(int) - by_definition).max() <= 1
    assert np.mean(reference == by_definition) > 0.95  # the f32 ops at half steps
    if y[0] == 0.02:
        assert np.mean((reference == info.min) | (reference == info.max)) > 0.01
    for target, padding, compiled, (got,) in everywhere(module, [x]):
        difference = np.abs(got.astype(int) - reference.astype(int))
        assert difference.max() <= 1, (target, padding)
        # Off by one only at half steps, which these grids' weights (multiples of 1/64) make
        # common: the f32 ops' roundings put them on either side.
        assert np.mean(difference == 0) > 0.95, (target, padding)
        if target == "onednn" and ONEDNN:
            assert chosen_kernels(compiled, nn.QResizeOp) == {"qresize_onednn"}


def test_align_corners_runs_the_reference_kernel() -> None:
    module = _module("ui8", (7, 7), (14, 14), (0.05, 17), "align_corners")
    compiled = compile_module(module, "onednn", True)
    assert chosen_kernels(compiled, nn.QResizeOp) == {"qresize_ref"}
