"""oneDNN's integer convolution (kernels/onednn/integer_conv.py) in the pipeline: a float
input quantized dynamically (a zero point far from 0), `nn.conv_integer` with padding,
strides, groups and depthwise, cast back: the oneDNN target and host compile it to
conv_integer_onednn (nhwc) and give the interpreter's result on the uncompiled program bit
for bit, padding on and off, interpreter and generated module (the padding holds x's zero
point); and a non-zero weight zero point is refused by name."""

from __future__ import annotations

import numpy as np
import pytest

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.kernels.onednn.integer_conv import integer_conv_refusal
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import DEFAULT_PIPELINE, compile_module, parse
from nnlayout.tests.kernels.test_onednn_quantized_matmul import (  # noqa: F401
    pytestmark,  # oneDNN with VNNI or AMX
)

# channels in, out, groups, strides, pads, weight zero point
CASES = {
    "padded": (8, 16, 1, (1, 1), (1, 1, 1, 1), 0),
    "grouped_strided": (8, 8, 2, (2, 2), (0, 1, 2, 1), 0),
    "depthwise": (16, 16, 16, (1, 1), (1, 1, 1, 1), 0),
    "weight_zero_point": (8, 16, 1, (1, 1), (1, 1, 1, 1), 3),
}


def program(c: int, o: int, groups: int, strides: tuple, pads: tuple, w_zp: int) -> str:  # type: ignore[type-arg]
    rng = np.random.default_rng(c * o + groups)
    weights = rng.integers(-128, 128, (o, c // groups, 3, 3))
    dense = np.array2string(weights, separator=", ", threshold=1 << 20).replace("\n", "")
    x, w = f"tensor<1x{c}x9x9xf32>", f"tensor<{o}x{c // groups}x3x3xi8>"
    oh = (9 + pads[0] + pads[2] - 3) // strides[0] + 1
    ow = (9 + pads[1] + pads[3] - 3) // strides[1] + 1
    y = f"tensor<1x{o}x{oh}x{ow}"
    zp = f" {{w_zero_point = dense<{w_zp}> : tensor<i8>}}" if w_zp else ""
    return f"""
func.func @main(%x: {x}) -> {y}xf32> {{
  %s = nn.dynamic_scale %x : {x} -> tensor<f32>
  %z = nn.dynamic_zero_point %x : {x} -> tensor<ui8>
  %q = nn.dynamic_quantize %x, %s, %z : ({x}, tensor<f32>, tensor<ui8>) -> tensor<1x{c}x9x9xui8>
  %w = nn.constant dense<{dense}> : {w}
  %c = nn.conv_integer %q, %w zero_point %z strides [{strides[0]}, {strides[1]}] pads [{", ".join(map(str, pads))}] dilations [1, 1] groups {groups}{zp} : (tensor<1x{c}x9x9xui8>, {w}, tensor<ui8>) -> {y}xi32>
  %f = nn.cast %c : {y}xi32> -> {y}xf32>
  func.return %f : {y}xf32>
}}
"""


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("target", ["onednn", "host"])
def test_integer_conv_on_onednn_is_exact(name: str, target: str) -> None:
    module = parse(program(*CASES[name]))
    rng = np.random.default_rng(1)
    c = CASES[name][0]
    inputs = [(rng.standard_normal((1, c, 9, 9)) + 1.5).astype(np.float32)]  # zero point ~60
    (want,) = Interpreter(module).run(inputs)
    for padding in (True, False):
        compiled = compile_module(module, target, padding, DEFAULT_PIPELINE)
        kernels = {
            kernel_of(op).kernel_name.data  # type: ignore[union-attr]
            for op in compiled.walk()
            if isinstance(op, nn.ConvIntegerOp)
        }
        onednn = CASES[name][5] == 0  # oneDNN's convolutions take no weights zero point
        assert kernels == {"conv_integer_onednn" if onednn else "conv_integer_ref"}, kernels
        for got in (Interpreter(compiled).run(inputs)[0], run_generated(compiled, inputs)[0]):
            np.testing.assert_array_equal(got, want)


def test_weight_zero_point_is_refused_by_name() -> None:
    module = parse(program(*CASES["weight_zero_point"]))
    op = next(op for op in module.walk() if isinstance(op, nn.ConvIntegerOp))
    assert integer_conv_refusal(op) == (
        "the weights have a zero point != 0; oneDNN's convolutions take none"
    )
