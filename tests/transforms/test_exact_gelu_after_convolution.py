"""The exact GELU after a convolution (a pointwise convolution, as ConvNeXt's Linear layers
are when exported as Conv): `fuse-post-ops` makes it the convolution's gelu_erf post-op,
which oneDNN runs only on calls whose operands' norms prove the convolution finite (its
gelu_erf turns +inf into NaN); other calls run the convolution exactly and the GELU in
numpy. +inf, -inf, NaN and values whose products overflow give the unfused results on
every target, padding on and off, interpreter and generated module."""

from __future__ import annotations

import numpy as np
import pytest

from nnlayout.dialects import nn
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    ALL_TARGETS,
    DEFAULT_PIPELINE,
    assert_same,
    compile_module,
    dense,
    parse,
    random_inputs,
)

# 5 channels in (padded in blocked layouts), 12 out; the GELU's result is returned as is.
POINTWISE_GELU = f"""
func.func @f(%x: tensor<1x5x6x6xf32>) -> tensor<1x12x6x6xf32> {{
  %w = nn.constant dense<{dense((12, 5, 1, 1), 5)}> : tensor<12x5x1x1xf32>
  %b = nn.constant dense<{dense((12,), 6)}> : tensor<12xf32>
  %c = nn.conv2d %x, %w, %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x5x6x6xf32>, tensor<12x5x1x1xf32>, tensor<12xf32>) -> tensor<1x12x6x6xf32>
  %y = nn.gelu %c : tensor<1x12x6x6xf32>
  func.return %y : tensor<1x12x6x6xf32>
}}
"""


@pytest.mark.parametrize("target", ALL_TARGETS)
def test_the_exact_gelu_after_a_convolution_gives_the_unfused_results(target: str) -> None:
    module = parse(POINTWISE_GELU)
    sets = []
    for value in [1.0, np.inf, -np.inf, np.nan, 3e38, -3e38]:
        inputs = random_inputs(module)
        inputs[0][0, 2, 3, 4] = value
        sets.append((inputs, Interpreter(module).run(inputs)))
    for padding in (True, False):
        planned = compile_module(module, target, padding, DEFAULT_PIPELINE)
        fused = [op for op in planned.walk() if isinstance(op, nn.FusedConv2dOp)]
        if target.startswith("onednn") or target == "host":
            assert [op.activation.data for op in fused] == ["gelu"]
            assert not any(isinstance(op, nn.GeluOp) for op in planned.walk())
        for inputs, expected in sets:
            assert_same(expected, Interpreter(planned).run(inputs))
            assert_same(expected, run_generated(planned, inputs))
