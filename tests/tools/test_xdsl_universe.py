"""Stock `xdsl-opt` finds nnlayout through its `xdsl.universe` entry point (tools/universe.py):
it reads the nn and layout dialects and runs nnlayout's passes, and what it writes reads back
into nnlayout and runs to the same results. The entry point exists once the package is
installed (`pip install -e .`; a checkout whose pyproject.toml changed needs it again)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np
import pytest
from xdsl.universe import Universe

from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import random_inputs
from nnlayout.transforms import own_passes

XDSL_OPT = shutil.which("xdsl-opt", path=str(Path(sys.executable).parent)) or "xdsl-opt"
CONV_BATCH_NORM = """
func.func @f(%x: tensor<1x8x6x6xf32>) -> tensor<1x16x6x6xf32> {
  %w = nn.constant dense<0.1> : tensor<16x8x3x3xf32>
  %b = nn.constant dense<0.2> : tensor<16xf32>
  %scale = nn.constant dense<1.5> : tensor<16xf32>
  %beta = nn.constant dense<0.3> : tensor<16xf32>
  %mean = nn.constant dense<0.05> : tensor<16xf32>
  %var = nn.constant dense<2.0> : tensor<16xf32>
  %c = nn.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x8x6x6xf32>, tensor<16x8x3x3xf32>, tensor<16xf32>) -> tensor<1x16x6x6xf32>
  %n = nn.batch_norm %c, %scale, %beta, %mean, %var epsilon 1.0e-05 : (tensor<1x16x6x6xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x6x6xf32>
  %r = nn.relu %n : tensor<1x16x6x6xf32>
  func.return %r : tensor<1x16x6x6xf32>
}
"""


def nnlayout_entry_point() -> Universe:
    (found,) = [e for e in entry_points(group="xdsl.universe") if e.name == "nnlayout"] or [None]
    assert found is not None, "no xdsl.universe entry point: reinstall (pip install -e .)"
    return found.load()


def test_the_entry_point_offers_the_dialects_and_every_own_pass() -> None:
    universe = nnlayout_entry_point()
    assert sorted(universe.all_dialects) == ["layout", "nn"]
    assert [d().name for d in universe.all_dialects.values()] == ["nn", "layout"]
    assert universe.all_passes.keys() == own_passes().keys()
    assert {"fold-batch-norm", "default-pipeline", "plan-memory"} <= universe.all_passes.keys()
    everything = Universe.get_multiverse()  # xDSL refuses a name two universes define
    assert {"nn", "layout", "memref"} <= everything.all_dialects.keys()


@pytest.mark.parametrize("pipeline", ["fold-batch-norm", "default-pipeline{target=avx2}"])
def test_xdsl_opt_runs_our_passes_on_our_ir(pipeline: str) -> None:
    done = subprocess.run(
        [XDSL_OPT, "-p", pipeline],
        input=CONV_BATCH_NORM,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "nn.batch_norm" not in done.stdout and "nn.conv2d" in done.stdout
    if pipeline.startswith("default-pipeline"):
        assert "memref.view" in done.stdout
    original = parse_module(make_context(), CONV_BATCH_NORM, "<original>")
    transformed = parse_module(make_context(), done.stdout, "<xdsl-opt>")
    inputs = random_inputs(original)
    (expected,) = Interpreter(original).run(inputs)
    (actual,) = Interpreter(transformed).run(inputs)
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)


def test_xdsl_opt_reads_what_nnlayout_opt_prints_at_every_stage() -> None:
    """nnlayout-opt's default print is xDSL's syntax (`memref.alloc() {alignment = 64 : i64}`,
    not MLIR's `alignment = 64`, which xDSL 0.75 refuses): planned IR goes on to xdsl-opt."""
    planned = subprocess.run(
        [sys.executable, "-m", "nnlayout.tools.opt", "-", "-p", "default-pipeline{target=avx2}"],
        input=CONV_BATCH_NORM,
        capture_output=True,
        text=True,
    )
    assert planned.returncode == 0, planned.stderr
    assert "memref.alloc() {alignment = 64 : i64}" in planned.stdout
    checked = subprocess.run(
        [XDSL_OPT, "-p", "verify-memory-plan"],
        input=planned.stdout,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert checked.returncode == 0, checked.stderr
    assert "memref.view" in checked.stdout
