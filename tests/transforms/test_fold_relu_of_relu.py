"""The tutorial's pass (examples/fold_relu_of_relu.py, docs/tutorial.md): relu(relu(x)) ->
relu(x) keeps the program's results (NaN included) on every target, padding on and off,
through the whole pipeline, and refuses bufferized IR."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects import nn
from nnlayout.examples.fold_relu_of_relu import FoldReluOfRelu
from nnlayout.ir.context import make_context
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    PIPELINE_TARGETS,
    assert_same,
    compile_module,
    dense,
    parse,
    random_inputs,
)

# conv(3 -> 20 channels, not a whole block) -> relu -> relu -> sigmoid: sigmoid(0) = 0.5 must
# not leak from the padding lanes, and the two relus run on blocked data.
PROGRAM = f"""
func.func @f(%x: tensor<1x3x8x8xf32>) -> tensor<1x20x8x8xf32> {{
  %w = nn.constant dense<{dense((20, 3, 3, 3), 1)}> : tensor<20x3x3x3xf32>
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<20x3x3x3xf32>) -> tensor<1x20x8x8xf32>
  %a = nn.relu %c : tensor<1x20x8x8xf32>
  %b = nn.relu %a : tensor<1x20x8x8xf32>
  %s = nn.sigmoid %b : tensor<1x20x8x8xf32>
  func.return %s : tensor<1x20x8x8xf32>
}}"""


def folded(module: ModuleOp) -> ModuleOp:
    copy = module.clone()
    FoldReluOfRelu().apply(make_context(), copy)
    return copy


def test_one_relu_is_left() -> None:
    after = folded(parse(PROGRAM))
    assert sum(isinstance(op, nn.ReluOp) for op in after.walk()) == 1
    after.verify()


@pytest.mark.parametrize("target", PIPELINE_TARGETS)
@pytest.mark.parametrize("padding", [True, False])
def test_results_are_kept(target: str, padding: bool) -> None:
    module = parse(PROGRAM)
    inputs = random_inputs(module)
    inputs[0][0, 0, 2, 2] = np.nan  # NaN stays NaN through both forms
    expected = Interpreter(module).run(inputs)
    assert np.isnan(expected[0]).any()
    compiled = compile_module(folded(module), target, padding, DEFAULT_PIPELINE)
    assert_same(expected, Interpreter(compiled).run(inputs))


def test_bufferized_ir_is_refused() -> None:
    bufferized = compile_module(parse(PROGRAM), "avx2", True, DEFAULT_PIPELINE)
    with pytest.raises(DiagnosticError):
        FoldReluOfRelu().apply(make_context(), bufferized)
