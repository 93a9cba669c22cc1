"""Every tensor-level pass refuses bufferized IR (transforms/stages.py) instead of rewriting
ops inside nn.compute bodies."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp

from nnlayout.diagnostics import UserError
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.tools.driver import parse_pipeline, run_pipeline
from nnlayout.transforms import get_all_passes

PROGRAM = """
func.func @f(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %y = nn.relu %x : tensor<1x16x8x8xf32>
  func.return %y : tensor<1x16x8x8xf32>
}
"""
TENSOR_LEVEL = [
    "extend-ranks",
    "select-dispatch",
    "fuse-post-ops",
    "fuse-matmul-post-ops",
    "fuse-activations",
    "fold-batch-norm",
    "insert-layouts",
    "propagate-layouts",
    "fold-constants",
]


def run(pipeline: str, module: ModuleOp | None = None) -> ModuleOp:
    """`module` (a new parse of PROGRAM by default) after `pipeline`."""
    module = parse_module(make_context(), PROGRAM, "<test>") if module is None else module
    run_pipeline(parse_pipeline(pipeline, get_all_passes()), make_context(), module)
    return module


@pytest.mark.parametrize("pass_name", TENSOR_LEVEL)
@pytest.mark.parametrize("first", ["bufferize", "default-pipeline{target=avx2}"])
def test_tensor_level_passes_refuse_bufferized_ir(first: str, pass_name: str) -> None:
    bufferized = run(first)
    with pytest.raises(UserError, match="already bufferized"):
        run(pass_name, bufferized)


@pytest.mark.parametrize("pass_name", TENSOR_LEVEL)
def test_tensor_level_passes_run_on_tensor_ir(pass_name: str) -> None:
    run(pass_name)
