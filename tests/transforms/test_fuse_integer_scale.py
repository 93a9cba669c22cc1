"""fuse-integer-scale keeps semantics: a dynamically quantized product (DynamicQuantizeLinear,
MatMulInteger, Cast, Mul by the run-time scale, per tensor and per column, of [L, 1, E] and
[N, K] inputs) gives the same bits before the pass, after it alone, and through
default-pipeline on every target, padding on and off, interpreter and generated module."""

from __future__ import annotations

import numpy as np

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
