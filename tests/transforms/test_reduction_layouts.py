"""The padding traps of reductions and normalisations through the layout passes: a mean over
20 channels of NCHW8c/NCHW16c data has 4 or 12 padding lanes that must not count, a max over
channels whose real values are all negative must not meet a padding zero (the blocked
reduction kernel runs on that data), and LRN and layer norm after a blocked convolution;
each program checked on every target, padding on and off, against the interpreter before the
passes (`check_semantics`)."""

from __future__ import annotations

import numpy as np
import pytest

from nnlayout.dialects import nn
from nnlayout.dialects.layout import encoding_name
from nnlayout.tests.helpers import (
    check_semantics,
    compile_module,
    dense,
    parse,
    random_inputs,
)

CONV = """
  %w = nn.constant dense<{w}> : tensor<20x3x3x3xf32>
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x6x6xf32>, tensor<20x3x3x3xf32>) -> tensor<1x20x6x6xf32>
"""


def _program(body: str, result: str) -> str:
    return f"""
func.func @f(%x: tensor<1x3x6x6xf32>) -> {result} {{{CONV.format(w=dense((20, 3, 3, 3), 1))}{body}
}}"""


@pytest.mark.parametrize("kind", ["mean", "sum", "max", "min", "prod", "l2", "log_sum"])
def test_reduction_over_padded_channels(kind: str) -> None:
    """-sigmoid(conv) (sigmoid for log_sum, whose sum must be positive): every real value
    in (-1, 0), so a padding zero would win a max and zero a product, and a mean divided by
    the physical lanes would be too small. The reduction reads the blocked data as it is."""
    negate = "nn.abs" if kind == "log_sum" else "nn.neg"
    module = parse(
        _program(
            f"""  %s = nn.sigmoid %c : tensor<1x20x6x6xf32>
  %p = {negate} %s : tensor<1x20x6x6xf32>
  %r = nn.reduce %p kind "{kind}" axes [1] : tensor<1x20x6x6xf32> -> tensor<1x1x6x6xf32>
  func.return %r : tensor<1x1x6x6xf32>""",
            "tensor<1x1x6x6xf32>",
        )
    )
    check_semantics(module, random_inputs(module))
    for target in ("avx2", "avx512"):  # (oneDNN's sigmoid may stop the layout before)
        compiled = compile_module(module, target, True)
        [reduce] = [op for op in compiled.walk() if isinstance(op, nn.ReduceOp)]
        assert encoding_name(reduce.input.type) != "", target


def test_reduction_over_every_axis_and_over_spatial_axes_after_a_blocked_conv() -> None:
    """Over N, C, H, W at once (the channel axis among them), and over H alone."""
    module = parse(
        _program(
            """  %a = nn.reduce %c kind "max" axes [0, 1, 2, 3] : tensor<1x20x6x6xf32> -> tensor<1x1x1x1xf32>
  %h = nn.reduce %c kind "mean" axes [2] : tensor<1x20x6x6xf32> -> tensor<1x20x1x6xf32>
  func.return %a, %h : tensor<1x1x1x1xf32>, tensor<1x20x1x6xf32>""",
            "(tensor<1x1x1x1xf32>, tensor<1x20x1x6xf32>)",
        )
    )
    inputs = random_inputs(module)
    inputs[0] -= 10  # the max over everything is below zero
    check_semantics(module, inputs)


def test_lrn_and_layer_norm_after_a_blocked_conv() -> None:
    """LRN across 20 channels (a padding lane's square adds nothing, but its window must
    end at the real channels) and a layer norm over W."""
    module = parse(
        _program(
            f"""  %l = nn.lrn %c size 5 alpha 1.0e-2 beta 0.75 bias 1.5 : tensor<1x20x6x6xf32>
  %s = nn.constant dense<{dense((6,), 2)}> : tensor<6xf32>
  %n = nn.layer_norm %l, %s axis -1 epsilon 1.0e-5 : (tensor<1x20x6x6xf32>, tensor<6xf32>) -> tensor<1x20x6x6xf32>
  %w2 = nn.constant dense<{dense((5, 20, 1, 1), 3)}> : tensor<5x20x1x1xf32>
  %y = nn.conv2d %n, %w2 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x20x6x6xf32>, tensor<5x20x1x1xf32>) -> tensor<1x5x6x6xf32>
  func.return %y : tensor<1x5x6x6xf32>""",
            "tensor<1x5x6x6xf32>",
        )
    )
    inputs = random_inputs(module)
    inputs[0][0, 1, 2, 3] = np.nan  # NaN spreads as in the reference, padding included
    check_semantics(module, inputs)
