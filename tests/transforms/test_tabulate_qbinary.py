"""tabulate-qbinary keeps semantics: onnxruntime's quantized swish (x times its sigmoid's
table), hardswish (x times its hardsigmoid's table, the table read elsewhere too) and a
square give the same bytes after fold-qdq alone (a qmul run by its reference kernel), after
tabulate-qbinary, and through default-pipeline on every target, padding on and off,
interpreter and generated module (4 channels: blocked layouts pad them)."""

from __future__ import annotations

import numpy as np

from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import compile_module, everywhere, parse

T = "tensor<1x4x5x5x{}>"
F, U = T.format("f32"), T.format("ui8")
X = "{x_scale = dense<0.05> : tensor<f32>, x_zero_point = dense<120> : tensor<ui8>}"
PROGRAM = f"""
func.func @f(%in: {F}) -> ({U}, {U}, {U}, {U}, {U}) {{
  %x = nn.quantize %in {{y_scale = dense<0.05> : tensor<f32>, y_zero_point = dense<120> : tensor<ui8>}} : {F} -> {U}
  %xf = nn.dequantize %x {X} : {U} -> {F}
  %s = nn.sigmoid %xf : {F}
  %sq = nn.quantize %s {{y_scale = dense<0.00390625> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>}} : {F} -> {U}
  %sf = nn.dequantize %sq {{x_scale = dense<0.00390625> : tensor<f32>, x_zero_point = dense<0> : tensor<ui8>}} : {U} -> {F}
  %m = nn.mul %xf, %sf : ({F}, {F}) -> {F}
  %swish = nn.quantize %m {{y_scale = dense<0.03> : tensor<f32>, y_zero_point = dense<30> : tensor<ui8>}} : {F} -> {U}
  %h = nn.hardsigmoid %xf alpha 0.16666667 beta 5.000000e-01 : {F}
  %hq = nn.quantize %h {{y_scale = dense<0.00392157> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>}} : {F} -> {U}
  %hf = nn.dequantize %hq {{x_scale = dense<0.00392157> : tensor<f32>, x_zero_point = dense<0> : tensor<ui8>}} : {U} -> {F}
  %p = nn.mul %hf, %xf : ({F}, {F}) -> {F}
  %hswish = nn.quantize %p {{y_scale = dense<0.025> : tensor<f32>, y_zero_point = dense<50> : tensor<ui8>}} : {F} -> {U}
  %q = nn.mul %xf, %xf : ({F}, {F}) -> {F}
  %square = nn.quantize %q {{y_scale = dense<0.2> : tensor<f32>, y_zero_point = dense<3> : tensor<ui8>}} : {F} -> {U}
  %c = nn.mul %xf, %xf : ({F}, {F}) -> {F}
  %cq = nn.quantize %c {{y_scale = dense<0.1> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>}} : {F} -> {U}
  %cf = nn.dequantize %cq {{x_scale = dense<0.1> : tensor<f32>, x_zero_point = dense<0> : tensor<ui8>}} : {U} -> {F}
  %t = nn.tanh %cf : {F}
  %tanh = nn.quantize %t {{y_scale = dense<0.0078125> : tensor<f32>, y_zero_point = dense<0> : tensor<ui8>}} : {F} -> {U}
  func.return %swish, %hq, %hswish, %square, %tanh : {U}, {U}, {U}, {U}, {U}
}}
"""


def test_tabulate_qbinary_keeps_semantics() -> None:
    module = parse(PROGRAM)
    x = (np.random.default_rng(3).standard_normal((1, 4, 5, 5)) * 3).astype(np.float32)
    folded = compile_module(module, "ref", True, "fold-qdq")
    assert [op.name for op in folded.walk()].count("nn.qmul") == 4
    want = Interpreter(folded).run([x])
    assert all(len(np.unique(w)) > 10 for w in want)  # not saturated
    tabulated = compile_module(module, "ref", True, "fold-qdq,tabulate-qbinary")
    names = [op.name for op in tabulated.walk()]
    assert "nn.qmul" not in names and names.count("nn.qlookup") == 5, names
    for got, expected in zip(Interpreter(tabulated).run([x]), want, strict=True):
        np.testing.assert_array_equal(got, expected)
    for target, padding, compiled, outputs in everywhere(module, [x]):
        assert "nn.qmul" not in {op.name for op in compiled.walk()}, target
        for got, expected in zip(outputs, want, strict=True):
            np.testing.assert_array_equal(got, expected, err_msg=f"{target} padding={padding}")
