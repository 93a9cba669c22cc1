"""fuse-integer-scale keeps semantics: a dynamically quantized product (DynamicQuantizeLinear,
MatMulInteger, Cast, Mul by the run-time scale, per tensor and per column, of [L, 1, E] and
[N, K] inputs, and the bias Add after it) gives the same bits before the pass, after it alone,
and through default-pipeline on every target, padding on and off, interpreter and generated
module."""

from __future__ import annotations

import numpy as np

from nnlayout.dialects import nn
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import compile_module, everywhere, parse

PROGRAM = """
func.func @f(%x: tensor<5x1x8xf32>) -> (tensor<5x1x4xf32>, tensor<5x1x4xf32>) {{
  %s = nn.dynamic_scale %x : tensor<5x1x8xf32> -> tensor<f32>
  %z = nn.dynamic_zero_point %x : tensor<5x1x8xf32> -> tensor<ui8>
  %q = nn.dynamic_quantize %x, %s, %z : (tensor<5x1x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<5x1x8xui8>
  %w = nn.constant dense<{w}> : tensor<8x4xi8>
  %ws = nn.constant dense<0.0123> : tensor<f32>
  %cs = nn.constant dense<[0.01, 0.02, 0.003, 0.5]> : tensor<4xf32>
  %m = nn.mul %s, %ws : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %mc = nn.mul %s, %cs : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %p = nn.matmul_integer %q, %w zero_point %z : (tensor<5x1x8xui8>, tensor<8x4xi8>, tensor<ui8>) -> tensor<5x1x4xi32>
  %c = nn.cast %p : tensor<5x1x4xi32> -> tensor<5x1x4xf32>
  %y = nn.mul %c, %m : (tensor<5x1x4xf32>, tensor<f32>) -> tensor<5x1x4xf32>
  %p2 = nn.matmul_integer %q, %w zero_point %z {{b_zero_point = dense<-2> : tensor<i8>}} : (tensor<5x1x8xui8>, tensor<8x4xi8>, tensor<ui8>) -> tensor<5x1x4xi32>
  %c2 = nn.cast %p2 : tensor<5x1x4xi32> -> tensor<5x1x4xf32>
  %y2 = nn.mul %mc, %c2 : (tensor<4xf32>, tensor<5x1x4xf32>) -> tensor<5x1x4xf32>
  func.return %y, %y2 : tensor<5x1x4xf32>, tensor<5x1x4xf32>
}}
"""


def test_fuse_integer_scale_keeps_semantics() -> None:
    weights = np.random.default_rng(1).integers(-128, 128, (8, 4)).tolist()
    module = parse(PROGRAM.format(w=weights))
    x = np.random.default_rng(2).standard_normal((5, 1, 8)).astype(np.float32)
    want = Interpreter(module).run([x])
    fused = compile_module(module, "ref", True, "fuse-integer-scale")
    names = [op.name for op in fused.walk()]
    assert names.count("nn.matmul_integer_to_float") == 2
    assert "nn.cast" not in names and "nn.matmul_integer" not in names
    for got, expected in zip(Interpreter(fused).run([x]), want, strict=True):
        np.testing.assert_array_equal(got, expected)
    for target, padding, compiled, outputs in everywhere(module, [x]):
        assert "nn.matmul_integer_to_float" in {op.name for op in compiled.walk()}, target
        for got, expected in zip(outputs, want, strict=True):
            np.testing.assert_array_equal(got, expected, err_msg=f"{target} padding={padding}")


BIAS_PROGRAM = """
func.func @f(%x: tensor<7x16xf32>, %b: tensor<5xf32>) -> (tensor<7x5xf32>, tensor<7x5xf32>) {{
  %s = nn.dynamic_scale %x : tensor<7x16xf32> -> tensor<f32>
  %z = nn.dynamic_zero_point %x : tensor<7x16xf32> -> tensor<ui8>
  %q = nn.dynamic_quantize %x, %s, %z : (tensor<7x16xf32>, tensor<f32>, tensor<ui8>) -> tensor<7x16xui8>
  %w = nn.constant dense<{w}> : tensor<16x5xi8>
  %ws = nn.constant dense<0.0123> : tensor<f32>
  %c = nn.constant dense<{c}> : tensor<5xf32>
  %m = nn.mul %s, %ws : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %p = nn.matmul_integer %q, %w zero_point %z : (tensor<7x16xui8>, tensor<16x5xi8>, tensor<ui8>) -> tensor<7x5xi32>
  %f = nn.cast %p : tensor<7x5xi32> -> tensor<7x5xf32>
  %y = nn.mul %f, %m : (tensor<7x5xf32>, tensor<f32>) -> tensor<7x5xf32>
  %yb = nn.add %y, %c : (tensor<7x5xf32>, tensor<5xf32>) -> tensor<7x5xf32>
  %p2 = nn.matmul_integer %q, %w zero_point %z : (tensor<7x16xui8>, tensor<16x5xi8>, tensor<ui8>) -> tensor<7x5xi32>
  %f2 = nn.cast %p2 : tensor<7x5xi32> -> tensor<7x5xf32>
  %y2 = nn.mul %m, %f2 : (tensor<f32>, tensor<7x5xf32>) -> tensor<7x5xf32>
  %yb2 = nn.add %b, %y2 : (tensor<5xf32>, tensor<7x5xf32>) -> tensor<7x5xf32>
  func.return %yb, %yb2 : tensor<7x5xf32>, tensor<7x5xf32>
}}
"""


def test_the_bias_add_fused_keeps_semantics() -> None:
    """The bias add after the scaled product (a constant, and an argument) becomes the
    product's bias: the same bits before the pass, after it, and through default-pipeline
    on every target, padding on and off, interpreter and generated module."""
    rng = np.random.default_rng(4)
    weights = rng.integers(-128, 128, (16, 5)).tolist()
    constant = (rng.standard_normal(5) * 2).astype(np.float32).tolist()
    module = parse(BIAS_PROGRAM.format(w=weights, c=constant))
    inputs = [
        rng.standard_normal((7, 16)).astype(np.float32),
        (rng.standard_normal(5) * 2).astype(np.float32),
    ]
    want = Interpreter(module).run(inputs)
    fused = compile_module(module, "ref", True, "fuse-integer-scale")
    products = [op for op in fused.walk() if isinstance(op, nn.MatmulIntegerToFloatOp)]
    assert len(products) == 2 and all(op.bias is not None for op in products)
    assert "nn.add" not in {op.name for op in fused.walk()}
    for got, expected in zip(Interpreter(fused).run(inputs), want, strict=True):
        np.testing.assert_array_equal(got, expected)
    for target, padding, compiled, outputs in everywhere(module, inputs):
        assert "nn.add" not in {op.name for op in compiled.walk()}, target
        for got, expected in zip(outputs, want, strict=True):
            np.testing.assert_array_equal(got, expected, err_msg=f"{target} padding={padding}")
