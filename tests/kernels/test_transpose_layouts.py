"""`transpose_onednn` reads its input in the layout it comes in (NHWC) when that layout only
orders the axes, and writes its result in NHWC where propagate-layouts asks
(`TransposeToOrderedLayout`): ConvNeXt's LayerNorm2d (conv -> transpose to [N, H, W, C] ->
layer norm over the channels -> transpose back -> conv) and its blocks' ends (transpose back
-> layer scale -> residual add -> conv) then need no reorder around the transposes, which
become views, and compute the same as before on every target, padding on and off, through the
interpreter and the generated module."""

from __future__ import annotations

import json

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Attribute

from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import (
    LayoutSpec,
    encoding_name,
    layout_of,
    transposed_same_bytes,
    with_encoding_name,
)
from nnlayout.dialects.nn import TransposeOp
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
def test_transposes_read_and_write_nhwc_data(target: str) -> None:
    """On the targets whose convolutions keep NHWC data, the first transpose reads it as it
    is and the second writes it for the next convolution: two activation reorders are left
    (the input's and the output's), not four; and both transposes become views."""
    planned = compile_module(parse(LAYER_NORM_2D), target, True)
    transposes = [op for op in planned.walk() if isinstance(op, TransposeOp)]
    assert [kernel_of(op).kernel_name.data for op in transposes] == ["transpose_onednn"] * 2
    assert encoding_name(transposes[0].input.type) == "NHWC"
    assert encoding_name(transposes[0].output.type) == ""
    assert encoding_name(transposes[1].input.type) == ""
    assert encoding_name(transposes[1].output.type) == "NHWC"
    assert kernel_of(transposes[1]).results == ("NHWC",)
    assert activation_reorders(planned) == 2
    # bufferize makes both views: each operand's bytes are its result's.
    bufferized = compile_module(parse(LAYER_NORM_2D), target, True, DEFAULT_PIPELINE)
    assert not [op for op in bufferized.walk() if isinstance(op, TransposeOp)]


BLOCK_END = f"""
func.func @f(%x: tensor<1x8x6x6xf32>, %r: tensor<1x20x6x6xf32>) -> tensor<1x8x6x6xf32> {{
  %y = nn.transpose %x perm [0, 2, 3, 1] : tensor<1x8x6x6xf32> -> tensor<1x6x6x8xf32>
  %w0 = nn.constant dense<{_dense((8, 20), 5)}> : tensor<8x20xf32>
  %h = nn.matmul %y, %w0 : (tensor<1x6x6x8xf32>, tensor<8x20xf32>) -> tensor<1x6x6x20xf32>
  %u = nn.transpose %h perm [0, 3, 1, 2] : tensor<1x6x6x20xf32> -> tensor<1x20x6x6xf32>
  %scale = nn.constant dense<{_dense((1, 20, 1, 1), 6)}> : tensor<1x20x1x1xf32>
  %m = nn.mul %scale, %u : (tensor<1x20x1x1xf32>, tensor<1x20x6x6xf32>) -> tensor<1x20x6x6xf32>
  %a = nn.add %m, %r : (tensor<1x20x6x6xf32>, tensor<1x20x6x6xf32>) -> tensor<1x20x6x6xf32>
  %w = nn.constant dense<{_dense((8, 20, 3, 3), 7)}> : tensor<8x20x3x3xf32>
  %c = nn.conv2d %a, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x20x6x6xf32>, tensor<8x20x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return %c : tensor<1x8x6x6xf32>
}}
"""


def _block_end_inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    return [
        rng.standard_normal(shape).astype(np.float32) for shape in ((1, 8, 6, 6), (1, 20, 6, 6))
    ]


def test_block_end_same_results_everywhere() -> None:
    """A ConvNeXt block's end, whose transpose writes NHWC on the oneDNN targets and whose
    layer scale and residual add then run in NHWC (20 channels: padded on the blocked ones)."""
    module = parse(BLOCK_END)
    inputs = _block_end_inputs()
    check_semantics(module, inputs, targets=ALL_TARGETS)
    expected = Interpreter(module).run(inputs)
    for target in ALL_TARGETS:
        for padding in (True, False):
            planned = compile_module(module, target, padding, DEFAULT_PIPELINE)
            assert_same(expected, tuple(run_generated(planned, inputs)))


@pytest.mark.parametrize("target", ["onednn", "host"])
def test_block_end_runs_in_nhwc(target: str) -> None:
    """The transpose back writes NHWC, the mul and add follow: the residual's reorder is the
    one activation reorder left; the kernel itself writes NHWC (run by the interpreter on
    the program before bufferize, where no transpose is a view)."""
    planned = compile_module(parse(BLOCK_END), target, True)
    back = [op for op in planned.walk() if isinstance(op, TransposeOp)][1]
    assert encoding_name(back.output.type) == "NHWC"
    assert transpose_types_reason(back) is None
    assert activation_reorders(planned) == 2  # the residual's, into NHWC; the output's
    inputs = _block_end_inputs()
    assert_same(Interpreter(parse(BLOCK_END)).run(inputs), Interpreter(planned).run(inputs))


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


def _typed(shape: tuple[int, ...], layout: str = "") -> TensorType[Attribute]:
    return with_encoding_name(TensorType(f32, shape), layout)


def test_transposed_same_bytes() -> None:
    """A transpose moves nothing where its result, in its layout, has its operand's bytes."""
    plain, nhwc = _typed((1, 6, 6, 20)), _typed((1, 20, 6, 6), "NHWC")
    assert transposed_same_bytes(plain, nhwc, [0, 3, 1, 2])
    assert transposed_same_bytes(nhwc, plain, [0, 2, 3, 1])
    assert not transposed_same_bytes(plain, _typed((1, 20, 6, 6)), [0, 3, 1, 2])
    blocked = _typed((1, 20, 6, 6), "NCHW16c")
    assert not transposed_same_bytes(plain, blocked, [0, 3, 1, 2])  # padded, split
    heads = _typed((1, 6, 4, 20))
    assert not transposed_same_bytes(heads, _typed((1, 4, 6, 20), "NHWC"), [0, 2, 1, 3])
