"""`transpose_onednn` reads its input in the layout it comes in (NHWC) when that layout only
orders the axes: ConvNeXt's LayerNorm2d (conv -> transpose to [N, H, W, C] -> layer norm over
the channels -> transpose back -> conv) then needs no reorder between the convolution and the
transpose, and computes the same as before on every target, padding on and off, through the
interpreter and the generated module."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import LayoutSpec, encoding_name, layout_of
from nnlayout.dialects.nn import TransposeOp, ints
from nnlayout.kernels.onednn.binding import available as onednn_available
from nnlayout.kernels.onednn.common import unblocked_refusal
from nnlayout.kernels.onednn.transpose import transpose_types_reason
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    ALL_TARGETS,
    DEFAULT_PIPELINE,
    activation_reorders,
    assert_same,
    check_semantics,
    compile_module,
    parse,
)

pytestmark = pytest.mark.skipif(not onednn_available(), reason="oneDNN does not load here")


def _dense(shape: tuple[int, ...], seed: int) -> str:
    return json.dumps(np.random.default_rng(seed).standard_normal(shape).round(3).tolist())


LAYER_NORM_2D = f"""
func.func @f(%x: tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> {{
  %w1 = nn.constant dense<{_dense((20, 8, 3, 3), 1)}> : tensor<20x8x3x3xf32>
  %c1 = nn.conv2d %x, %w1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x8x6x6xf32>, tensor<20x8x3x3xf32>) -> tensor<1x20x6x6xf32>
  %t = nn.transpose %c1 perm [0, 2, 3, 1] : tensor<1x20x6x6xf32> -> tensor<1x6x6x20xf32>
  %s = nn.constant dense<{_dense((20,), 2)}> : tensor<20xf32>
  %b = nn.constant dense<{_dense((20,), 3)}> : tensor<20xf32>
  %n = nn.layer_norm %t, %s, %b axis -1 epsilon 1.0e-6 : (tensor<1x6x6x20xf32>, tensor<20xf32>, tensor<20xf32>) -> tensor<1x6x6x20xf32>
  %u = nn.transpose %n perm [0, 3, 1, 2] : tensor<1x6x6x20xf32> -> tensor<1x20x6x6xf32>
  %w2 = nn.constant dense<{_dense((8, 20, 1, 1), 4)}> : tensor<8x20x1x1xf32>
  %c2 = nn.conv2d %u, %w2 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x20x6x6xf32>, tensor<8x20x1x1xf32>) -> tensor<1x8x6x6xf32>
  func.return %c2 : tensor<1x8x6x6xf32>
}}
"""


def test_layer_norm_2d_same_results_everywhere() -> None:
    """20 channels: NCHW16c pads them to 32 on the blocked targets (the transpose there reads
    plain data after a reorder, which drops the padding lanes)."""
    module = parse(LAYER_NORM_2D)
    x = np.random.default_rng(0).standard_normal((1, 8, 6, 6)).astype(np.float32)
    check_semantics(module, [x], targets=ALL_TARGETS)
    expected = Interpreter(module).run([x])
    for target in ALL_TARGETS:
        for padding in (True, False):
            planned = compile_module(module, target, padding, DEFAULT_PIPELINE)
            assert_same(expected, tuple(run_generated(planned, [x])))


@pytest.mark.parametrize("target", ["onednn", "host"])
def test_transpose_reads_the_convolutions_nhwc_data(target: str) -> None:
    """On the targets whose convolutions keep NHWC data, the first transpose reads it as it
    is: three activation reorders are left (the input's, into the second convolution's NHWC
    and out of it), not four; and the transpose becomes a view."""
    planned = compile_module(parse(LAYER_NORM_2D), target, True)
    transposes = [op for op in planned.walk() if isinstance(op, TransposeOp)]
    assert [kernel_of(op).kernel_name.data for op in transposes] == ["transpose_onednn"] * 2
    assert encoding_name(transposes[0].input.type) == "NHWC"
    assert encoding_name(transposes[0].output.type) == ""
    assert activation_reorders(planned) == 3
    # bufferize makes the first one a view: its operand's bytes are its result's.
    bufferized = compile_module(parse(LAYER_NORM_2D), target, True, DEFAULT_PIPELINE)
    computed = [op for op in bufferized.walk() if isinstance(op, TransposeOp)]
    assert [list(ints(op.perm)) for op in computed] == [[0, 3, 1, 2]]


@pytest.mark.parametrize("target", ["onednn-nchw8c", "onednn-nchw16c"])
def test_blocked_input_refused(target: str) -> None:
    """Where the convolutions keep channel-blocked data, the transpose refuses it (a split
    axis has no one stride) and reads plain data after a reorder."""
    planned = compile_module(parse(LAYER_NORM_2D), target, True)
    transpose = next(op for op in planned.walk() if isinstance(op, TransposeOp))
    spec = layout_of(transpose.input.type)
    assert spec is None or not spec.is_blocked
    assert transpose_types_reason(transpose) is None
    assert "blocked" in str(unblocked_refusal(transpose, LayoutSpec.parse("NCHW16c")))
