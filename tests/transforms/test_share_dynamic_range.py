"""share-dynamic-range keeps semantics: DynamicQuantizeLinear's scale and zero point read
from one `nn.dynamic_range` give the same bits as read from the activation, before the pass,
after it alone, and through default-pipeline on every target, padding on and off,
interpreter and generated module, NaN and infinities included (the range holds them, so the
scale is NaN or infinite as before)."""

from __future__ import annotations

import numpy as np
import pytest

from nnlayout.dialects import nn
from nnlayout.kernels.onednn.dynamic_quantize import scaled_by_own_range
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import compile_module, everywhere, parse

PROGRAM = """
func.func @f(%x: tensor<6x8xf32>) -> (tensor<6x8xui8>, tensor<f32>, tensor<ui8>) {
  %a = nn.relu %x : tensor<6x8xf32>
  %s = nn.dynamic_scale %a : tensor<6x8xf32> -> tensor<f32>
  %z = nn.dynamic_zero_point %a : tensor<6x8xf32> -> tensor<ui8>
  %q = nn.dynamic_quantize %a, %s, %z : (tensor<6x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<6x8xui8>
  %xs = nn.dynamic_scale %x : tensor<6x8xf32> -> tensor<f32>
  %xz = nn.dynamic_zero_point %x : tensor<6x8xf32> -> tensor<ui8>
  func.return %q, %xs, %xz : tensor<6x8xui8>, tensor<f32>, tensor<ui8>
}
"""


def _inputs(case: str) -> np.ndarray:
    x = np.random.default_rng(3).standard_normal((6, 8)).astype(np.float32) * 3
    if case == "positive":  # a range from 0: the zero point 0
        x = np.abs(x)
    elif case == "nan":
        x[2, 5] = np.nan
    elif case == "inf":
        x[4, 1] = np.inf
    return x


@pytest.mark.parametrize("case", ["normal", "positive", "nan", "inf"])
def test_share_dynamic_range_keeps_semantics(case: str) -> None:
    module = parse(PROGRAM)
    x = _inputs(case)
    with np.errstate(invalid="ignore"):
        want = Interpreter(module).run([x])
        shared = compile_module(module, "ref", True, "share-dynamic-range")
        assert [op.name for op in shared.walk()].count("nn.dynamic_range") == 2
        for got, expected in zip(Interpreter(shared).run([x]), want, strict=True):
            np.testing.assert_array_equal(got, expected)
        for target, padding, compiled, outputs in everywhere(module, [x]):
            assert "nn.dynamic_range" in {op.name for op in compiled.walk()}, target
            quantize = next(op for op in compiled.walk() if isinstance(op, nn.DynamicQuantizeOp))
            assert scaled_by_own_range(quantize), target
            for got, expected in zip(outputs, want, strict=True):
                np.testing.assert_array_equal(got, expected, err_msg=f"{target} padding={padding}")
