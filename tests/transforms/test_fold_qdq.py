"""fold-qdq keeps semantics: a QDQ program (f32 in and out, quantize/dequantize around conv
+ relu, gemm, add, concat, global average pool, max pool with pads on i8 data, average pool
with pads counted, whose padding holds the zero point -128) runs the same,
within one quantization step, before the pass and after it alone or in default-pipeline on
every target, padding on and off, by the interpreter and the generated module."""

from __future__ import annotations

import numpy as np
import pytest

from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    ALL_TARGETS,
    DEFAULT_PIPELINE,
    assert_close,
    compile_module,
    parse,
)

STEP = 0.5  # the outputs' scale

PROGRAM = """
func.func @f(%in: tensor<1x3x6x6xf32>) -> (tensor<1x5xf32>, tensor<1x5x3x3xf32>) {{
  %x = nn.quantize %in {{y_scale = dense<0.05> : tensor<f32>, y_zero_point = dense<-7> : tensor<i8>}} : tensor<1x3x6x6xf32> -> tensor<1x3x6x6xi8>
  %xf = nn.dequantize %x {{x_scale = dense<0.05> : tensor<f32>, x_zero_point = dense<-7> : tensor<i8>}} : tensor<1x3x6x6xi8> -> tensor<1x3x6x6xf32>
  %wq = nn.constant dense<{w}> : tensor<5x3x3x3xi8>
  %wf = nn.dequantize %wq {{axis = 0 : i64, x_scale = dense<[0.01, 0.02, 0.015, 0.01, 0.03]> : tensor<5xf32>, x_zero_point = dense<0> : tensor<5xi8>}} : tensor<5x3x3x3xi8> -> tensor<5x3x3x3xf32>
  %bq = nn.constant dense<[40, -300, 17, 0, 2000]> : tensor<5xi32>
  %bf = nn.dequantize %bq {{axis = 0 : i64, x_scale = dense<[5.0e-04, 1.0e-03, 7.5e-04, 5.0e-04, 1.5e-03]> : tensor<5xf32>, x_zero_point = dense<0> : tensor<5xi32>}} : tensor<5xi32> -> tensor<5xf32>
  %c = nn.conv2d %xf, %wf, %bf strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x6x6xf32>, tensor<5x3x3x3xf32>, tensor<5xf32>) -> tensor<1x5x6x6xf32>
  %r = nn.relu %c : tensor<1x5x6x6xf32>
  %cq = nn.quantize %r {{y_scale = dense<0.02> : tensor<f32>, y_zero_point = dense<-128> : tensor<i8>}} : tensor<1x5x6x6xf32> -> tensor<1x5x6x6xi8>
  %cf = nn.dequantize %cq {{x_scale = dense<0.02> : tensor<f32>, x_zero_point = dense<-128> : tensor<i8>}} : tensor<1x5x6x6xi8> -> tensor<1x5x6x6xf32>
  %m = nn.max_pool2d %cf kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x5x6x6xf32> -> tensor<1x5x3x3xf32>
  %mq = nn.quantize %m {{y_scale = dense<0.02> : tensor<f32>, y_zero_point = dense<-128> : tensor<i8>}} : tensor<1x5x3x3xf32> -> tensor<1x5x3x3xi8>
  %mf = nn.dequantize %mq {{x_scale = dense<0.02> : tensor<f32>, x_zero_point = dense<-128> : tensor<i8>}} : tensor<1x5x3x3xi8> -> tensor<1x5x3x3xf32>
  %a = nn.avg_pool2d %mf kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] count_include_pad : tensor<1x5x3x3xf32> -> tensor<1x5x3x3xf32>
  %aq = nn.quantize %a {{y_scale = dense<0.02> : tensor<f32>, y_zero_point = dense<-128> : tensor<i8>}} : tensor<1x5x3x3xf32> -> tensor<1x5x3x3xi8>
  %af = nn.dequantize %aq {{x_scale = dense<0.02> : tensor<f32>, x_zero_point = dense<-128> : tensor<i8>}} : tensor<1x5x3x3xi8> -> tensor<1x5x3x3xf32>
  %s = nn.add %af, %mf : (tensor<1x5x3x3xf32>, tensor<1x5x3x3xf32>) -> tensor<1x5x3x3xf32>
  %sq = nn.quantize %s {{y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<3> : tensor<i8>}} : tensor<1x5x3x3xf32> -> tensor<1x5x3x3xi8>
  %sf = nn.dequantize %sq {{x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<3> : tensor<i8>}} : tensor<1x5x3x3xi8> -> tensor<1x5x3x3xf32>
  %g = nn.global_avg_pool %mf : tensor<1x5x3x3xf32> -> tensor<1x5x1x1xf32>
  %gq = nn.quantize %g {{y_scale = dense<0.01> : tensor<f32>, y_zero_point = dense<-100> : tensor<i8>}} : tensor<1x5x1x1xf32> -> tensor<1x5x1x1xi8>
  %gf = nn.dequantize %gq {{x_scale = dense<0.01> : tensor<f32>, x_zero_point = dense<-100> : tensor<i8>}} : tensor<1x5x1x1xi8> -> tensor<1x5x1x1xf32>
  %fl = nn.flatten %gf axis 1 : tensor<1x5x1x1xf32> -> tensor<1x5xf32>
  %fq = nn.quantize %fl {{y_scale = dense<0.01> : tensor<f32>, y_zero_point = dense<-100> : tensor<i8>}} : tensor<1x5xf32> -> tensor<1x5xi8>
  %ff = nn.dequantize %fq {{x_scale = dense<0.01> : tensor<f32>, x_zero_point = dense<-100> : tensor<i8>}} : tensor<1x5xi8> -> tensor<1x5xf32>
  %vq = nn.constant dense<{v}> : tensor<5x5xi8>
  %vf = nn.dequantize %vq {{x_scale = dense<0.02> : tensor<f32>, x_zero_point = dense<0> : tensor<i8>}} : tensor<5x5xi8> -> tensor<5x5xf32>
  %y = nn.gemm %ff, %vf trans_b alpha 1.0 beta 1.0 : (tensor<1x5xf32>, tensor<5x5xf32>) -> tensor<1x5xf32>
  %yq = nn.quantize %y {{y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<0> : tensor<i8>}} : tensor<1x5xf32> -> tensor<1x5xi8>
  %yf = nn.dequantize %yq {{x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<0> : tensor<i8>}} : tensor<1x5xi8> -> tensor<1x5xf32>
  func.return %yf, %sf : tensor<1x5xf32>, tensor<1x5x3x3xf32>
}}
"""


def _integers(shape: tuple[int, ...], seed: int) -> str:
    values = np.random.default_rng(seed).integers(-127, 128, size=shape)
    return str(values.tolist())


@pytest.fixture(scope="module")
def program():  # type: ignore[no-untyped-def]
    return parse(PROGRAM.format(w=_integers((5, 3, 3, 3), 1), v=_integers((5, 5), 2)))


def test_fold_qdq_then_default_pipeline_keep_semantics(program) -> None:  # type: ignore[no-untyped-def]
    inputs = [np.random.default_rng(3).standard_normal((1, 3, 6, 6)).astype(np.float32) * 2]
    expected = Interpreter(program).run(inputs)
    folded = compile_module(program, "ref", True, "fold-qdq")
    names = {op.name for op in folded.walk()}
    assert {"nn.qconv2d", "nn.qadd", "nn.qglobal_avg_pool", "nn.qavg_pool2d", "nn.qmatmul"} <= names
    assert not names & {"nn.conv2d", "nn.add", "nn.gemm", "nn.relu", "nn.avg_pool2d"}
    for want, got in zip(expected, Interpreter(folded).run(inputs), strict=True):
        assert_close(want, got, step=STEP)
    for target in ALL_TARGETS:
        for padding in (True, False):
            compiled = compile_module(program, target, padding, DEFAULT_PIPELINE)
            for backend, outputs in (
                ("interpreter", Interpreter(compiled).run(inputs)),
                ("generated", run_generated(compiled, inputs)),
            ):
                for want, got in zip(expected, outputs, strict=True):
                    try:
                        assert_close(want, got, step=STEP)
                    except AssertionError as error:
                        raise AssertionError(
                            f"{target} padding={padding} {backend}: {error}"
                        ) from None
