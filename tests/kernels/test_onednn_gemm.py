"""nn.gemm as oneDNN's matmul or inner product: transposes as strides and c as the bias row,
a constant b read transposed stored transposed (or in the inner product's format) at compile
time, the scratchpad of either storage declared, and what its matmul does not compute
refused."""

from __future__ import annotations

import re

import numpy as np
import pytest

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import encoding_name
from nnlayout.kernels.onednn.matmul import fc_weights_layout, gemm_accepts
from nnlayout.kernels.onednn.prepared import compiled_for
from nnlayout.kernels.targets import get_target
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    LAYOUT_PIPELINE,
    assert_same,
    compile_module,
    dense,
    parse,
    random_inputs,
)
from nnlayout.tests.kernels.test_onednn_kernels import check

pytestmark = pytest.mark.onednn


def gemm_program(
    trans_a: bool,
    trans_b: bool,
    c_shape: tuple[int, ...] | None,
    alpha: float = 1.0,
    beta: float = 1.0,
) -> str:
    m, k, n = 3, 40, 24
    a = f"tensor<{k}x{m}xf32>" if trans_a else f"tensor<{m}x{k}xf32>"
    b = f"tensor<{n}x{k}xf32>" if trans_b else f"tensor<{k}x{n}xf32>"
    c = None if c_shape is None else f"tensor<{'x'.join(map(str, c_shape))}xf32>"
    operands = "%a, %b" + (", %c" if c else "")
    flags = (" trans_a" if trans_a else "") + (" trans_b" if trans_b else "")
    return f"""
func.func @f(%a: {a}, %b: {b}{f", %c: {c}" if c else ""}) -> tensor<{m}x{n}xf32> {{
  %y = nn.gemm {operands}{flags} alpha {alpha} beta {beta} : ({", ".join(t for t in (a, b, c) if t)}) -> tensor<{m}x{n}xf32>
  func.return %y : tensor<{m}x{n}xf32>
}}"""


@pytest.mark.parametrize(
    "trans_a, trans_b, c_shape",
    [(False, True, (24,)), (True, False, (1, 24)), (True, True, None), (False, False, (24,))],
)
def test_gemm_runs_as_onednn_matmul(
    trans_a: bool, trans_b: bool, c_shape: tuple[int, ...] | None
) -> None:
    """Transposes are strides of oneDNN's matmul, c its bias row: same results (NaN too)."""
    module = parse(gemm_program(trans_a, trans_b, c_shape))
    inputs = random_inputs(module)
    inputs[0][0, 0] = np.nan
    compiled = check(module, inputs, onednn_ops=1)
    (gemm,) = [op for op in compiled.walk() if op.name == "nn.gemm"]
    assert kernel_of(gemm).kernel_name.data == "gemm_onednn"


@pytest.mark.parametrize("trans_a, c_shape", [(False, (24,)), (True, None)])
@pytest.mark.parametrize("constant", [True, False])
def test_a_constant_b_read_transposed_is_stored_transposed(
    constant: bool, trans_a: bool, c_shape: tuple[int, ...] | None
) -> None:
    """A dense layer's weights (a constant b with trans_b, as ONNX's Gemm holds them) are
    stored at compile time, the constant reordered and folded: in the inner product's own
    format (a fully connected layer), or, read by a matmul (trans_a), K x N (layout IO) so
    that it reads rows rather than swapped strides; a b given at run time keeps its
    strides. Same results, interpreter and generated module (NaN too)."""
    text = gemm_program(trans_a, True, c_shape)
    if constant:
        text = re.sub(
            r"(, )?%b: tensor<24x40xf32>(, )?", lambda m: m[1] and m[2] or "", text
        ).replace(
            "{\n  %y",
            f"{{\n  %b = nn.constant dense<{dense((24, 40), 5)}> : tensor<24x40xf32>\n  %y",
        )
    module = parse(text)
    inputs = random_inputs(module)
    inputs[0][1, 2] = np.nan
    compiled = check(module, inputs, onednn_ops=1)
    (gemm,) = [op for op in compiled.walk() if op.name == "nn.gemm"]
    layout = "IO" if trans_a else fc_weights_layout(gemm)
    assert layout not in ("", "OI")
    assert kernel_of(gemm).operands[1] == (layout if constant else "")
    stored = [
        op
        for op in compiled.walk()
        if isinstance(op, nn.ConstantOp) and encoding_name(op.results[0].type) == layout
    ]
    assert len(stored) == constant
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    assert_same(Interpreter(module).run(inputs), run_generated(planned, inputs))


@pytest.mark.parametrize("trans_a", [False, True])
def test_a_gemm_declares_the_scratchpad_of_either_storage_of_b(trans_a: bool) -> None:
    """The kernel asks for b stored transposed (IO) or in the inner product's format, but a
    pipeline without insert-layouts (`select-dispatch` alone, run by the interpreter) leaves
    it plain: the matmul reads it through swapped strides, whose scratchpad is larger (it
    repacks b), the inner product reorders it at load; the declared workspace holds the
    scratchpad used either way."""
    text = (
        gemm_program(trans_a, True, (24,))
        .replace("%b: tensor<24x40xf32>, ", "")
        .replace(
            "{\n  %y",
            f"{{\n  %b = nn.constant dense<{dense((24, 40), 5)}> : tensor<24x40xf32>\n  %y",
        )
    )
    module = parse(text)
    inputs = random_inputs(module)
    for pipeline in ("select-dispatch{{target={target} padding={padding}}}", LAYOUT_PIPELINE):
        compiled = compile_module(module, "onednn", True, pipeline)
        (gemm,) = [op for op in compiled.walk() if op.name == "nn.gemm"]
        assert kernel_of(gemm).operands[1] == ("IO" if trans_a else fc_weights_layout(gemm))
        used = compiled_for(gemm)[0].scratchpad_bytes
        assert kernel_of(gemm).workspace.data >= used, (pipeline, used)
        assert_same(Interpreter(module).run(inputs), Interpreter(compiled).run(inputs))


@pytest.mark.parametrize(
    "alpha, beta, c_shape, reason",
    [
        (2.0, 1.0, (24,), "alpha 2.0"),
        (1.0, 0.5, (24,), "beta 0.5"),
        (1.0, 1.0, (3, 24), "c of shape [3, 24]"),
        (1.0, 1.0, (1,), "c of shape [1]"),
    ],
)
def test_gemm_onednn_refuses_what_its_matmul_does_not_compute(
    alpha: float, beta: float, c_shape: tuple[int, ...], reason: str
) -> None:
    module = parse(gemm_program(False, True, c_shape, alpha, beta))
    (gemm,) = [op for op in module.walk() if op.name == "nn.gemm"]
    assert reason in gemm_accepts(gemm, get_target("onednn"), True)
    compiled = compile_module(module, "onednn", padding=True)
    (gemm,) = [op for op in compiled.walk() if op.name == "nn.gemm"]
    assert kernel_of(gemm).kernel_name.data == "gemm_ref"
    assert_same(
        Interpreter(module).run(random_inputs(module)),
        Interpreter(compiled).run(random_inputs(module)),
    )
