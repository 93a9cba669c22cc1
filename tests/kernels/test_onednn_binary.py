"""oneDNN's binary max and min and its prelu against the reference kernels where oneDNN alone
would differ: its max/min return one operand where the other is NaN, its prelu multiplies a
zero source by the slope (0 * inf, 0 * NaN). Each runs in oneDNN on finite inputs and in
numpy on a call where a guarded argument is not (`eltwise.finite_arguments`); 5 channels, so
that the blocked targets pad; binary ops on rank-3 tokens, which run on plain data."""

from __future__ import annotations

import numpy as np
import pytest

from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import DEFAULT_PIPELINE, assert_same, compile_module, parse

pytestmark = pytest.mark.onednn

TARGETS = ("onednn", "onednn-nchw8c", "onednn-nchw16c")


def _run_everywhere(text: str, op_name: str, inputs: list[np.ndarray]) -> None:
    """The interpreter's result on `inputs`, by the oneDNN kernel of `op_name`, compiled for
    each oneDNN target (interpreter and generated module)."""
    module = parse(text)
    expected = Interpreter(module).run(inputs)
    for target in TARGETS:
        compiled = compile_module(module, target, True, DEFAULT_PIPELINE)
        names = {
            kernel.kernel_name.data
            for op in compiled.walk()
            if (kernel := kernel_of(op)) is not None
        }
        assert f"{op_name[3:]}_onednn" in names, names
        assert_same(expected, Interpreter(compiled).run(inputs))
        assert_same(expected, run_generated(compiled, inputs))


@pytest.mark.parametrize("op_name", ["nn.max", "nn.min"])
@pytest.mark.parametrize("where", [0, 1, None])
def test_max_min_propagate_nan_from_either_operand(op_name: str, where: int | None) -> None:
    text = f"""
func.func @f(%x: tensor<1x5x4x4xf32>, %y: tensor<1x5x4x4xf32>) -> tensor<1x5x4x4xf32> {{
  %m = {op_name} %x, %y : (tensor<1x5x4x4xf32>, tensor<1x5x4x4xf32>) -> tensor<1x5x4x4xf32>
  func.return %m : tensor<1x5x4x4xf32>
}}"""
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal((1, 5, 4, 4)).astype(np.float32) for _ in range(2)]
    if where is not None:
        inputs[where][0, 3, 1, 2] = np.nan
        inputs[where][0, 0, 0, 0] = np.inf
    _run_everywhere(text, op_name, inputs)


@pytest.mark.parametrize("special", [np.nan, np.inf, None])
def test_prelu_of_zero_with_a_non_finite_slope_keeps_the_zero(special: float | None) -> None:
    """x = 0 keeps 0 whatever the slope (x < 0 is false), as onnxruntime computes it."""
    text = """
func.func @f(%x: tensor<1x5x4x4xf32>, %s: tensor<5x1x1xf32>) -> tensor<1x5x4x4xf32> {
  %p = nn.prelu %x, %s : (tensor<1x5x4x4xf32>, tensor<5x1x1xf32>) -> tensor<1x5x4x4xf32>
  func.return %p : tensor<1x5x4x4xf32>
}"""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 5, 4, 4)).astype(np.float32)
    x[0, 2, :2] = 0.0
    x[0, 4, 3, 3] = np.nan
    slope = rng.uniform(-1, 1, (5, 1, 1)).astype(np.float32)
    if special is not None:
        slope[2] = special
    _run_everywhere(text, "nn.prelu", [x, slope])


@pytest.mark.parametrize("op_name", ["nn.add", "nn.sub", "nn.mul", "nn.div", "nn.max", "nn.min"])
@pytest.mark.parametrize("other", ["2x5x7", "1x1x7", "2x5x1", "1x5x7"])
def test_binary_ops_on_tokens_run_in_onednn(op_name: str, other: str) -> None:
    """A transformer's [N, T, D] tokens: plus a residual, a [1, 1, D] bias (a [D] one after
    extend-ranks), a per-token [N, T, 1] scale, a [1, T, D] position embedding; NaN and
    infinities in both operands."""
    text = f"""
func.func @f(%x: tensor<2x5x7xf32>, %y: tensor<{other}xf32>) -> tensor<2x5x7xf32> {{
  %m = {op_name} %x, %y : (tensor<2x5x7xf32>, tensor<{other}xf32>) -> tensor<2x5x7xf32>
  func.return %m : tensor<2x5x7xf32>
}}"""
    rng = np.random.default_rng(3)
    dims = tuple(int(d) for d in other.split("x"))
    inputs = [rng.standard_normal(s).astype(np.float32) for s in ((2, 5, 7), dims)]
    inputs[0][1, 2, 3] = np.nan
    inputs[0][0, 4, 6] = -np.inf
    inputs[1].reshape(-1)[-1] = np.inf
    _run_everywhere(text, op_name, inputs)
