"""The data-movement ops through the layout passes and the whole pipeline on every target,
padding on and off, against the interpreter (`check_semantics`), on 20 and 9 channels (off
both blocks): a channel slice off the block boundary and with a step, a constant pad of 1.5
(which must not reach the padding lanes the next convolution reads), reflect and edge pads,
resizes oneDNN takes and does not, a channel shuffle written as one op and as ShuffleNet's
Reshape-Transpose-Reshape, and a concat of parts off the block."""

from __future__ import annotations

import numpy as np
import pytest

from nnlayout.tests.helpers import check_semantics, dense, parse

PROGRAM = """
func.func @f(%x: tensor<1x3x8x8xf32>) -> (tensor<1x7x10x10xf32>, tensor<1x20x16x16xf32>, tensor<1x20x12x9xf32>, tensor<1x29x8x8xf32>, tensor<1x20x8x8xf32>) {{
  %w0 = nn.constant dense<{w0}> : tensor<20x3x3x3xf32>
  %c = nn.conv2d %x, %w0 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<20x3x3x3xf32>) -> tensor<1x20x8x8xf32>
  %s = nn.slice %c starts [0, 3, 0, 0] sizes [1, 9, 8, 8] steps [1, 2, 1, 1] : tensor<1x20x8x8xf32> -> tensor<1x9x8x8xf32>
  %p = nn.pad %s pads [0, 0, 1, 1, 0, 0, 1, 1] mode "constant" value 1.5 : tensor<1x9x8x8xf32> -> tensor<1x9x10x10xf32>
  %w1 = nn.constant dense<{w1}> : tensor<7x9x3x3xf32>
  %d = nn.conv2d %p, %w1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x9x10x10xf32>, tensor<7x9x3x3xf32>) -> tensor<1x7x10x10xf32>
  %r = nn.resize %c mode "linear" coordinates "half_pixel" nearest "floor" scales [2.0, 2.0] : tensor<1x20x8x8xf32> -> tensor<1x20x16x16xf32>
  %e = nn.pad %c pads [0, 0, 2, 1, 0, 0, 2, 0] mode "reflect" value 0.0 : tensor<1x20x8x8xf32> -> tensor<1x20x12x9xf32>
  %n = nn.resize %e mode "nearest" coordinates "asymmetric" nearest "floor" scales [1.0, 1.0] : tensor<1x20x12x9xf32> -> tensor<1x20x12x9xf32>
  %h = nn.channel_shuffle %c groups 4 : tensor<1x20x8x8xf32>
  %cat = nn.concat %h, %s axis 1 : (tensor<1x20x8x8xf32>, tensor<1x9x8x8xf32>) -> tensor<1x29x8x8xf32>
  %g = nn.reshape %c : tensor<1x20x8x8xf32> -> tensor<1x2x10x8x8xf32>
  %t = nn.transpose %g perm [0, 2, 1, 3, 4] : tensor<1x2x10x8x8xf32> -> tensor<1x10x2x8x8xf32>
  %u = nn.reshape %t : tensor<1x10x2x8x8xf32> -> tensor<1x20x8x8xf32>
  %w2 = nn.constant dense<{w2}> : tensor<20x20x1x1xf32>
  %v = nn.conv2d %u, %w2 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x20x8x8xf32>, tensor<20x20x1x1xf32>) -> tensor<1x20x8x8xf32>
  func.return %d, %r, %n, %cat, %v : tensor<1x7x10x10xf32>, tensor<1x20x16x16xf32>, tensor<1x20x12x9xf32>, tensor<1x29x8x8xf32>, tensor<1x20x8x8xf32>
}}
"""


@pytest.mark.parametrize("seed", [0, 1])
def test_movement_ops_keep_their_results_in_every_layout(seed: int) -> None:
    module = parse(
        PROGRAM.format(
            w0=dense((20, 3, 3, 3), seed),
            w1=dense((7, 9, 3, 3), seed),
            w2=dense((20, 20, 1, 1), seed),
        )
    )
    x = np.random.default_rng(seed).standard_normal((1, 3, 8, 8)).astype(np.float32)
    check_semantics(module, [x])
