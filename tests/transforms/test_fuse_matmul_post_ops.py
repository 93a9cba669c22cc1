"""`fuse-matmul-post-ops` and `nn.fused_matmul`: a transformer's Linear (matmul, bias add,
activation) computes what the unfused program did on every target, padding on and off,
interpreter and generated module, NaN and infinities included; fusion follows what the
chosen kernel accepts; the exact GELU, relu, clip and hardsigmoid fuse with a guard (the
reference runs a call whose product may not be finite), and so does a dense layer's Gemm."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from nnlayout.dialects.nn import FusedMatmulOp
from nnlayout.kernels.onednn import calls
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    ALL_TARGETS,
    DEFAULT_PIPELINE,
    assert_same,
    compile_module,
    dense,
    parse,
    random_inputs,
)

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


# The activations whose oneDNN post-op is the reference's on finite values only: the exact
# GELU (gelu_erf turns +inf into NaN), relu, clip and hardsigmoid (NaN to a bound).
GUARDED = [
    ("nn.gelu", ""),
    ("nn.relu", ""),
    ("nn.clip", "min 0.0 max 6.0 "),
    ("nn.hardsigmoid", "alpha 0.2 beta 0.5 "),
]
# One value in a row of x: the product's row is +-inf, NaN, or overflows from finite values.
SPECIALS = [np.inf, -np.inf, np.nan, 3e38, -3e38]


def with_special(inputs: list[np.ndarray], value: float) -> list[np.ndarray]:
    inputs = [x.copy() for x in inputs]
    inputs[0][0, 1, 5] = value
    return inputs


@pytest.mark.parametrize(("activation", "attributes"), GUARDED)
@pytest.mark.parametrize("rows", [12, 2])  # oneDNN's matmul (> 8 rows), its inner product
def test_guarded_activations_fuse_and_give_the_unfused_results(
    activation: str, attributes: str, rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exact GELU, relu, clip and hardsigmoid fuse; a call whose product may not be
    finite runs the reference (gelu(+inf) stays +inf, relu(NaN) NaN), any other the fused
    primitive alone."""
    module = parse(mlp(rows, activation, attributes))
    fused = compile_module(module, "onednn", True, FUSE)
    assert [op.activation is not None for op in fused_ops(fused)] == [True, False]
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    assert len(fused_ops(planned)) == 2
    fallbacks = []
    reference = calls.reference_result
    monkeypatch.setattr(
        calls, "reference_result", lambda op, xs: fallbacks.append(op) or reference(op, xs)
    )
    inputs = random_inputs(module)
    for run in (Interpreter(fused).run, Interpreter(planned).run):
        assert_same(Interpreter(module).run(inputs), run(inputs))
    assert not fallbacks  # finite and small: the fused primitive
    for value in SPECIALS:
        special = with_special(inputs, value)
        expected = Interpreter(module).run(special)
        for run in (Interpreter(fused).run, Interpreter(planned).run):
            assert_same(expected, run(special))
        assert_same(expected, run_generated(planned, special))
    assert fallbacks


@pytest.mark.parametrize("target", ["ref", "avx2", "avx512", "onednn", "host"])
@pytest.mark.parametrize("padding", [True, False])
def test_the_exact_gelu_gives_the_unfused_results_on_every_target(
    target: str, padding: bool
) -> None:
    module = parse(mlp(12, "nn.gelu"))
    planned = compile_module(module, target, padding, DEFAULT_PIPELINE)
    assert len(fused_ops(planned)) == (2 if target in ("onednn", "host") else 0)
    for value in [1.0, *SPECIALS]:
        inputs = with_special(random_inputs(module), value)
        expected = Interpreter(module).run(inputs)
        assert_same(expected, Interpreter(planned).run(inputs))
        assert_same(expected, run_generated(planned, inputs))


def test_the_exact_gelu_under_nnan_is_guarded_against_infinities() -> None:
    """`nnan` promises no NaN, not no infinity: gelu(+inf) stays +inf."""
    module = parse(mlp(12, "nn.gelu"))
    nnan = FUSE[: -len("}}")] + " nnan=true}}"
    fused = compile_module(module, "onednn", True, nnan)
    assert [op.nnan is not None for op in fused_ops(fused)][:1] == [True]
    inputs = with_special(random_inputs(module), np.inf)
    assert_same(Interpreter(module).run(inputs), Interpreter(fused).run(inputs))


def dense_layers(activation: str, trans_b: bool, bias_shape: str = "8") -> str:
    """A classifier as ONNX's Gemm writes it: [2, 16] -> gemm (weights [8, 16] read
    transposed, or [16, 8]), activation -> gemm -> [2, 4]."""
    w1 = "8x16" if trans_b else "16x8"
    shape = tuple(int(n) for n in w1.split("x"))
    transposed = " trans_b" if trans_b else ""
    return f"""
func.func @f(%x: tensor<2x16xf32>) -> tensor<2x4xf32> {{
  %w1 = nn.constant dense<{dense(shape, 1)}> : tensor<{w1}xf32>
  %c1 = nn.constant dense<{dense(tuple(int(n) for n in bias_shape.split("x")), 2)}> : tensor<{bias_shape}xf32>
  %w2 = nn.constant dense<{dense((4, 8), 3)}> : tensor<4x8xf32>
  %c2 = nn.constant dense<{dense((4,), 4)}> : tensor<4xf32>
  %h = nn.gemm %x, %w1, %c1{transposed} alpha 1.0 beta 1.0 : (tensor<2x16xf32>, tensor<{w1}xf32>, tensor<{bias_shape}xf32>) -> tensor<2x8xf32>
  %a = {activation} %h : tensor<2x8xf32>
  %y = nn.gemm %a, %w2, %c2 trans_b alpha 1.0 beta 1.0 : (tensor<2x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}}"""


@pytest.mark.parametrize(
    ("activation", "trans_b", "bias_shape"),
    [
        ("nn.relu", True, "8"),
        pytest.param("nn.sigmoid", False, "1x8", marks=pytest.mark.slow),
        pytest.param("nn.gelu", True, "1x8", marks=pytest.mark.slow),
    ],
)
def test_a_dense_layer_and_its_activation_fuse(
    activation: str, trans_b: bool, bias_shape: str
) -> None:
    """On every target, padding on and off, interpreter and generated module, specials
    included; oneDNN's targets fuse the first gemm and its activation."""
    module = parse(dense_layers(activation, trans_b, bias_shape))
    sets = []
    for value in [1.0, *SPECIALS]:
        inputs = random_inputs(module)
        inputs[0][1, 5] = value
        sets.append((inputs, Interpreter(module).run(inputs)))
    for target in ALL_TARGETS:
        for padding in (True, False):
            compiled = compile_module(module, target, padding, DEFAULT_PIPELINE)
            fuses = target.startswith("onednn") or target == "host"
            assert len(fused_ops(compiled)) == (1 if fuses else 0)
            assert fuses != any(op.name == activation for op in compiled.walk())
            for inputs, expected in sets:
                assert_same(expected, Interpreter(compiled).run(inputs))
                assert_same(expected, run_generated(compiled, inputs))


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
