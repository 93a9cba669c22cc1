"""`fuse-matmul-post-ops` and `nn.fused_matmul`: a transformer's Linear (matmul, bias add,
activation) computes what the unfused program did on every target, padding on and off,
interpreter and generated module, NaN and infinities included; fusion follows what the
chosen kernel accepts (the exact GELU keeps a kernel of its own, with a remark)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from nnlayout.dialects.nn import FusedMatmulOp
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    assert_same,
    compile_module,
    dense,
    parse,
    random_inputs,
)
from nnlayout.transforms import remarks

pytestmark = pytest.mark.onednn  # its kernels are the only fused ones

FUSE = (
    "extend-ranks,select-dispatch{{target={target} padding={padding}}},"
    "fuse-matmul-post-ops{{target={target} padding={padding}}}"
)


def mlp(rows: int, activation: str, attributes: str = "") -> str:
    """[1, rows, 16] -> matmul, bias, activation -> matmul, bias (bias first, as the
    classic exporter writes it) -> [1, rows, 8]; the hidden and final results returned."""
    x, h, y = (f"tensor<1x{rows}x{n}xf32>" for n in (16, 32, 8))
    return f"""
func.func @f(%x: {x}) -> ({h}, {y}) {{
  %w1 = nn.constant dense<{dense((16, 32), 1)}> : tensor<16x32xf32>
  %b1 = nn.constant dense<{dense((32,), 2)}> : tensor<32xf32>
  %w2 = nn.constant dense<{dense((32, 8), 3)}> : tensor<32x8xf32>
  %b2 = nn.constant dense<{dense((8,), 4)}> : tensor<8xf32>
  %p = nn.matmul %x, %w1 : ({x}, tensor<16x32xf32>) -> {h}
  %s = nn.add %p, %b1 : ({h}, tensor<32xf32>) -> {h}
  %a = {activation} %s {attributes}: {h}
  %q = nn.matmul %a, %w2 : ({h}, tensor<32x8xf32>) -> {y}
  %y = nn.add %b2, %q : (tensor<8xf32>, {y}) -> {y}
  func.return %a, %y : {h}, {y}
}}"""


def fused_ops(module: ModuleOp) -> list[FusedMatmulOp]:
    return [op for op in module.walk() if isinstance(op, FusedMatmulOp)]


def with_specials(inputs: list[np.ndarray]) -> list[np.ndarray]:
    inputs[0][0, 1, :4] = [np.nan, np.inf, -np.inf, -0.0]
    return inputs


@pytest.mark.parametrize(
    ("activation", "attributes"),
    [
        ("nn.gelu", 'approximate "tanh" '),
        ("nn.sigmoid", ""),
        ("nn.tanh", ""),
        ("nn.swish", ""),
        ("nn.hardswish", ""),
    ],
)
@pytest.mark.parametrize("rows", [12, 2])  # oneDNN's matmul (> 8 rows), its inner product
def test_fused_products_compute_the_unfused_results(
    activation: str, attributes: str, rows: int
) -> None:
    module = parse(mlp(rows, activation, attributes))
    inputs = with_specials(random_inputs(module))
    expected = Interpreter(module).run(inputs)
    fused = compile_module(module, "onednn", True, FUSE)
    ops = fused_ops(fused)
    assert [(op.bias is not None, op.activation is not None) for op in ops] == [
        (True, True),
        (True, False),
    ]
    assert not any(op.name in ("nn.add", "nn.matmul", activation) for op in fused.walk())
    assert_same(expected, Interpreter(fused).run(inputs))
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    assert len(fused_ops(planned)) == 2
    assert_same(expected, Interpreter(planned).run(inputs))
    assert_same(expected, run_generated(planned, inputs))


@pytest.mark.parametrize("target", ["ref", "avx2", "avx512", "onednn", "host"])
@pytest.mark.parametrize("padding", [True, False])
def test_every_target_computes_the_unfused_results(target: str, padding: bool) -> None:
    """The default pipeline, interpreter and generated module; oneDNN's targets fuse."""
    module = parse(mlp(12, "nn.gelu", 'approximate "tanh" '))
    inputs = with_specials(random_inputs(module))
    expected = Interpreter(module).run(inputs)
    planned = compile_module(module, target, padding, DEFAULT_PIPELINE)
    assert len(fused_ops(planned)) == (2 if target in ("onednn", "host") else 0)
    assert_same(expected, Interpreter(planned).run(inputs))
    assert_same(expected, run_generated(planned, inputs))


def test_the_exact_gelu_is_not_fused_but_the_bias_is() -> None:
    """oneDNN's gelu_erf turns +inf into NaN: the GELU stays a kernel of its own, a remark
    says why, and the result keeps the reference's +inf."""
    module = parse(mlp(12, "nn.gelu"))
    inputs = with_specials(random_inputs(module))
    expected = Interpreter(module).run(inputs)
    with remarks.collecting() as seen:
        fused = compile_module(module, "onednn", True, FUSE[: -len("}}")] + " remarks=true}}")
    assert [(op.bias is not None, op.activation) for op in fused_ops(fused)] == [
        (True, None),
        (True, None),
    ]
    assert any("gelu post-op is not the reference's on infinities" in r.message for r in seen)
    assert_same(expected, Interpreter(fused).run(inputs))
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    assert_same(expected, run_generated(planned, inputs))


def test_a_product_read_elsewhere_and_a_bias_of_another_shape_are_not_fused() -> None:
    module = parse("""
func.func @f(%x: tensor<12x16xf32>, %c: tensor<12x1xf32>) -> (tensor<12x8xf32>, tensor<12x8xf32>) {
  %w = nn.constant dense<0.5> : tensor<16x8xf32>
  %b = nn.constant dense<1.0> : tensor<8xf32>
  %p = nn.matmul %x, %w : (tensor<12x16xf32>, tensor<16x8xf32>) -> tensor<12x8xf32>
  %s = nn.add %p, %b : (tensor<12x8xf32>, tensor<8xf32>) -> tensor<12x8xf32>
  %q = nn.matmul %x, %w : (tensor<12x16xf32>, tensor<16x8xf32>) -> tensor<12x8xf32>
  %t = nn.add %q, %c : (tensor<12x8xf32>, tensor<12x1xf32>) -> tensor<12x8xf32>
  func.return %s, %p : tensor<12x8xf32>, tensor<12x8xf32>
}""")
    fused = compile_module(module, "onednn", True, FUSE)
    assert not fused_ops(fused)
