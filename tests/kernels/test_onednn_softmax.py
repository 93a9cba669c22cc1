"""oneDNN's softmax over the last axis of plain data of any rank (attention's scores are
[B, H, T, T]), the reference's results on finite input and numpy's on the rest."""

from __future__ import annotations

import numpy as np
import pytest

from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import DEFAULT_PIPELINE, assert_same, compile_module, parse

pytestmark = pytest.mark.skipif(not b.available(), reason="oneDNN is not installed")


def softmax_program(shape: tuple[int, ...], axis: int) -> str:
    t = f"tensor<{'x'.join(map(str, shape))}xf32>"
    return f"""
func.func @f(%x: {t}) -> {t} {{
  %y = nn.softmax %x axis {axis} : {t}
  func.return %y : {t}
}}"""


def softmax_kernel(module: object) -> str:
    (op,) = [op for op in module.walk() if op.name == "nn.softmax"]  # type: ignore[attr-defined]
    return kernel_of(op).kernel_name.data


@pytest.mark.parametrize("shape", [(3, 7), (2, 5, 9), (1, 3, 5, 5), (2, 1, 3, 4, 20)])
@pytest.mark.parametrize("special", [None, np.nan, np.inf, -np.inf])
def test_softmax_over_the_last_axis_runs_on_onednn(
    shape: tuple[int, ...], special: float | None
) -> None:
    """Same results as the reference, interpreter and generated module; a NaN or an
    infinity in the input (a row of -inf included) gives the reference's NaN rows."""
    module = parse(softmax_program(shape, -1))
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32) * 4
    if special is not None:
        x.reshape(-1, shape[-1])[0, 2] = special
        if special == -np.inf:
            x.reshape(-1, shape[-1])[1, :] = -np.inf
    expected = Interpreter(module).run([x])
    compiled = compile_module(module, "onednn", True)
    assert softmax_kernel(compiled) == "softmax_onednn"
    assert_same(expected, Interpreter(compiled).run([x]))
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    assert_same(expected, run_generated(planned, [x]))


def test_softmax_over_another_axis_falls_back_where_onednn_has_only_its_reference() -> None:
    module = parse(softmax_program((1, 3, 5, 5), 1))
    compiled = compile_module(module, "onednn", True)
    assert softmax_kernel(compiled) != "softmax_onednn"
