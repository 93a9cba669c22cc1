"""`extend-ranks` and the broadcasting it enables: operands of lower rank ([C, 1, 1] per-channel
constants, PRelu slopes, a computed [C, 1, 1] value) get the result's rank, then run in the
blocked layout of the data through every target, padding on and off. Channel counts (20, 13)
are no multiple of the block, so that the padding traps spring: a constant's padding lanes are
zero, which keeps 0 + 0, 0 * 0, max(0, 0) and prelu(0) zero, but makes a division's padding
0 / 0 = NaN, which a following convolution would spread over every real channel unless the
division's kernel re-zeroes it."""

from __future__ import annotations

import numpy as np
import pytest

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import encoding_name
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    PIPELINE_TARGETS,
    activation_reorders,
    assert_same,
    check_semantics,
    compile_module,
    dense,
    parse,
    random_inputs,
    special,
)
from nnlayout.transforms.extend_ranks import extend_ranks

CONV = "strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1"


def _per_channel(op: str, channels: int, constant: str) -> str:
    """conv -> `op` with a [C, 1, 1] constant -> conv, C = `channels`."""
    c = channels
    return f"""
func.func @f(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {{
  %w1 = nn.constant dense<{dense((c, 3, 3, 3), 1)}> : tensor<{c}x3x3x3xf32>
  %k = nn.constant dense<{constant}> : tensor<{c}x1x1xf32>
  %w2 = nn.constant dense<{dense((4, c, 3, 3), 2)}> : tensor<4x{c}x3x3xf32>
  %a = nn.conv2d %x, %w1 {CONV} : (tensor<1x3x8x8xf32>, tensor<{c}x3x3x3xf32>) -> tensor<1x{c}x8x8xf32>
  %b = {op} %a, %k : (tensor<1x{c}x8x8xf32>, tensor<{c}x1x1xf32>) -> tensor<1x{c}x8x8xf32>
  %y = nn.conv2d %b, %w2 {CONV} : (tensor<1x{c}x8x8xf32>, tensor<4x{c}x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}}"""


def test_lower_rank_operands_are_reshaped_once() -> None:
    module = parse("""
func.func @f(%x: tensor<1x5x4x4xf32>, %s: tensor<5x1x1xf32>) -> tensor<1x5x4x4xf32> {
  %k = nn.constant dense<2.0> : tensor<4xf32>
  %a = nn.mul %x, %s : (tensor<1x5x4x4xf32>, tensor<5x1x1xf32>) -> tensor<1x5x4x4xf32>
  %b = nn.sub %s, %a : (tensor<5x1x1xf32>, tensor<1x5x4x4xf32>) -> tensor<1x5x4x4xf32>
  %c = nn.sum %b, %k, %x : (tensor<1x5x4x4xf32>, tensor<4xf32>, tensor<1x5x4x4xf32>) -> tensor<1x5x4x4xf32>
  func.return %c : tensor<1x5x4x4xf32>
}""")
    expected = Interpreter(module).run(random_inputs(module))
    extend_ranks(module)
    module.verify()
    reshapes = [op for op in module.walk() if isinstance(op, nn.ReshapeOp)]
    assert [nn.shape_of(op.output) for op in reshapes] == [(1, 5, 1, 1), (1, 1, 1, 4)]
    for op in module.walk():
        if isinstance(op, nn.BinaryOp | nn.SumOp):
            assert {len(nn.shape_of(v)) for v in op.operands} == {4}
    assert_same(expected, Interpreter(module).run(random_inputs(module)))


@pytest.mark.parametrize("op", ["nn.mul", "nn.add", "nn.sub", "nn.div", "nn.max", "nn.min"])
@pytest.mark.parametrize("channels", [20, 13])
def test_per_channel_constant_runs_blocked(op: str, channels: int) -> None:
    constant = dense((channels, 1, 1), 3)
    check_semantics(parse(_per_channel(op, channels, constant)), [_inputs()])


@pytest.mark.parametrize("channels", [20, 13])
def test_prelu_slope_of_shape_c11(channels: int) -> None:
    module = parse(_per_channel("nn.prelu", channels, dense((channels, 1, 1), 4)))
    check_semantics(module, [_inputs()])


def test_division_padding_does_not_leak() -> None:
    """A divisor's padding lanes are zero: 0 / 0 = NaN in the quotient's padding, which the
    next convolution multiplies by its zero weights for the padded input channels, NaN
    again, into every real output. The division's kernels re-zero it (the data's padding is
    checked directly, and through the convolution after it)."""
    module = parse(_per_channel("nn.div", 20, "2.0"))
    expected = Interpreter(module).run([_inputs()])
    assert np.isfinite(expected[0]).all()
    for target in PIPELINE_TARGETS[1:]:
        compiled = compile_module(module, target, True, DEFAULT_PIPELINE)
        [div] = [
            op
            for op in compiled.walk()
            if kernel_of(op) and "div" in kernel_of(op).kernel_name.data
        ]
        assert encoding_name(div.results[0].type) not in ("", "NHWC") or target.startswith("onednn")
        assert_same(expected, run_generated(compiled, [_inputs()]))


def test_per_channel_affine_keeps_data_blocked() -> None:
    """BatchNorm written as Mul and Add of [C, 1, 1] constants (old exports) between two
    convolutions: the data stays blocked, reordered only at the ends."""
    module = parse(_per_channel("nn.mul", 20, dense((20, 1, 1), 5)))
    for target in ("avx2", "avx512"):
        compiled = compile_module(module, target, True)
        [mul] = [op for op in compiled.walk() if isinstance(op, nn.MulOp)]
        assert encoding_name(mul.results[0].type) == f"NCHW{8 if target == 'avx2' else 16}c"
        assert activation_reorders(compiled) == 2


def test_lower_rank_activation_and_special_values() -> None:
    """A computed [C, 1, 1] operand (reshaped per inference), and NaN, infinities and signed
    zeros in both operands of max and min (oneDNN's drop NaN: guarded on both sources)."""
    module = parse(f"""
func.func @f(%x: tensor<1x3x8x8xf32>, %v: tensor<20x1x1xf32>, %u: tensor<1x20x8x8xf32>) -> tensor<1x20x8x8xf32> {{
  %w1 = nn.constant dense<{dense((20, 3, 3, 3), 1)}> : tensor<20x3x3x3xf32>
  %a = nn.conv2d %x, %w1 {CONV} : (tensor<1x3x8x8xf32>, tensor<20x3x3x3xf32>) -> tensor<1x20x8x8xf32>
  %b = nn.max %a, %v : (tensor<1x20x8x8xf32>, tensor<20x1x1xf32>) -> tensor<1x20x8x8xf32>
  %c = nn.min %b, %u : (tensor<1x20x8x8xf32>, tensor<1x20x8x8xf32>) -> tensor<1x20x8x8xf32>
  %d = nn.max %u, %c : (tensor<1x20x8x8xf32>, tensor<1x20x8x8xf32>) -> tensor<1x20x8x8xf32>
  %e = nn.prelu %d, %v : (tensor<1x20x8x8xf32>, tensor<20x1x1xf32>) -> tensor<1x20x8x8xf32>
  func.return %e : tensor<1x20x8x8xf32>
}}""")
    rng = np.random.default_rng(7)
    inputs = [_inputs(), special(rng, 20, 1, 1), special(rng, 1, 20, 8, 8)]
    check_semantics(module, inputs)
    expected = Interpreter(module).run(inputs)
    assert np.isnan(expected[0]).any()
    for target in PIPELINE_TARGETS:
        planned = compile_module(module, target, True, DEFAULT_PIPELINE)
        assert_same(expected, run_generated(planned, inputs))


def _inputs() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)
