"""nn.qbatch_norm (fold-qdq's dequantize -> batch norm -> quantize): oneDNN's binary chain
(kernels/onednn/quantized_batch_norm.py) gives the reference kernel's bytes, which are the
three unfolded ops' (u8 and s8, zero points not 0, NHWC and plain, DenseNet's shapes,
half steps and saturation); a zero variance runs the reference (a NaN's zero point); vectors
given as arguments are read on every run; and a program of it gives the unfolded program's
bits on every target, padding on and off, interpreter and generated module."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32, i8
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.dialects.nn import QParams
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.providers import registry
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.reference_quantized import dequantize_array, quantize_array
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import chosen_kernels, compile_module, everywhere, parse

pytestmark = [
    pytest.mark.onednn,
    pytest.mark.skipif(not b.available(), reason="oneDNN is not available here"),
]


def _op(shape: tuple[int, ...], x_type: object, y_type: object) -> nn.QBatchNormOp:
    x_zp, y_zp = (3, 128) if x_type == nn.ui8 else (-5, 7)
    params = (QParams.make(0.02, x_zp, x_type), QParams.make(0.05, y_zp, y_type))
    vectors = [create_ssa_value(TensorType(f32, (shape[1],))) for _ in range(4)]
    op = nn.QBatchNormOp(create_ssa_value(TensorType(x_type, shape)), vectors, params)
    op.verify()
    return op


def _vectors(channels: int, seed: int) -> list[np.ndarray]:
    """Scale, bias, mean and var; channels 0 and 1 scaled so much that they saturate (one
    upwards, the other downwards)."""
    rng = np.random.default_rng(seed)
    vectors = [
        rng.uniform(0.5, 2, channels).astype(np.float32),
        rng.standard_normal(channels).astype(np.float32),
        rng.standard_normal(channels).astype(np.float32),
        rng.uniform(0.1, 3, channels).astype(np.float32),
    ]
    vectors[0][:2] = (60.0, -60.0)
    return vectors


CASES = {
    "densenet_56_u8": ((1, 64, 56, 56), nn.ui8, nn.ui8),
    "densenet_7_u8": ((1, 1024, 7, 7), nn.ui8, nn.ui8),
    "odd_channels_s8": ((1, 24, 5, 5), i8, i8),
    "u8_to_s8": ((1, 16, 3, 3), nn.ui8, i8),
    "rank_2_plain": ((64, 40), nn.ui8, nn.ui8),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_binary_chain_is_the_reference(name: str) -> None:
    shape, x_type, y_type = CASES[name]
    op = _op(shape, x_type, y_type)
    chosen = registry().select(op, _host(), True)
    assert chosen is not None and chosen.kernel.name == "qbatch_norm_onednn", chosen
    kernel = registry().lookup("qbatch_norm_onednn")
    dtype = np.uint8 if x_type == nn.ui8 else np.int8
    out_dtype = np.uint8 if y_type == nn.ui8 else np.int8
    info = np.iinfo(dtype)
    x = np.random.default_rng(1).integers(info.min, info.max + 1, shape).astype(dtype)
    inputs = [x, *_vectors(shape[1], 2)]
    unfolded = quantize_array(
        REFERENCE_KERNELS[nn.BatchNormOp](op, [dequantize_array(x, op.qparams("x")), *inputs[1:]]),
        op.qparams("y"),
    )
    want = REFERENCE_KERNELS[nn.QBatchNormOp](op, inputs)
    np.testing.assert_array_equal(want, unfolded)
    physical = np.ascontiguousarray(np.moveaxis(x, 1, -1)) if len(shape) == 4 else x
    out = np.empty(physical.shape, out_dtype)
    run = kernel.prepare(op, None).on([physical, *inputs[1:]], out)
    for seed in range(2):  # vectors given on every run (not constants here): read anew
        for array, new in zip(inputs[1:], _vectors(shape[1], 3 + seed), strict=True):
            array[...] = new
        run()
        want = REFERENCE_KERNELS[nn.QBatchNormOp](op, inputs)
        got = np.moveaxis(out, -1, 1) if len(shape) == 4 else out
        np.testing.assert_array_equal(got, want)
    saturated = np.iinfo(out_dtype)
    assert got.min() == saturated.min and got.max() == saturated.max  # both ends reached


def test_a_zero_variance_runs_the_reference() -> None:
    """factor = scale / sqrt(0 + 0) is infinite: a NaN may follow, which oneDNN would make 0
    and the reference y's zero point."""
    op = _op((1, 4, 3, 3), nn.ui8, nn.ui8)
    op.properties["epsilon"] = nn.QBatchNormOp(
        op.input, list(op.operands[1:]), (op.qparams("x"), op.qparams("y")), 0.0
    ).epsilon
    x = np.full((1, 3, 3, 4), 3, np.uint8)  # x's zero point: 0 * inf is NaN
    vectors = _vectors(4, 5)
    vectors[3][1] = 0.0
    out = np.empty_like(x)
    registry().lookup("qbatch_norm_onednn").prepare(op, None).on([x, *vectors], out)()
    want = REFERENCE_KERNELS[nn.QBatchNormOp](op, [np.moveaxis(x, -1, 1), *vectors])
    np.testing.assert_array_equal(np.moveaxis(out, -1, 1), want)
    assert np.all(want[:, 1] == 128)  # the NaN's zero point


def test_an_x_scale_that_overflows_is_refused() -> None:
    """(x - x_zp) * x_scale overflowing float32 times a zero factor is a NaN, which oneDNN
    would make 0: such a scale is refused, and the reference runs."""
    from nnlayout.kernels.onednn.quantized_batch_norm import refusal

    shape = (1, 2, 2, 2)
    vectors = [create_ssa_value(TensorType(f32, (2,))) for _ in range(4)]
    params = (QParams.make(3e38, 0, nn.ui8), QParams.make(0.05, 128, nn.ui8))
    op = nn.QBatchNormOp(create_ssa_value(TensorType(nn.ui8, shape)), vectors, params)
    assert "overflows" in (refusal(op) or "")
    assert refusal(_op(shape, nn.ui8, nn.ui8)) is None


PROGRAM = """
func.func @f(%x: tensor<1x20x5x5xui8>) -> tensor<1x20x5x5xui8> {{
  %d = nn.dequantize %x {{x_scale = dense<0.03> : tensor<f32>, x_zero_point = dense<9> : tensor<ui8>}} : tensor<1x20x5x5xui8> -> tensor<1x20x5x5xf32>
  %g = nn.constant dense<{g}> : tensor<20xf32>
  %b = nn.constant dense<{b}> : tensor<20xf32>
  %m = nn.constant dense<{m}> : tensor<20xf32>
  %v = nn.constant dense<{v}> : tensor<20xf32>
  %n = nn.batch_norm %d, %g, %b, %m, %v epsilon 1.0e-05 : (tensor<1x20x5x5xf32>, tensor<20xf32>, tensor<20xf32>, tensor<20xf32>, tensor<20xf32>) -> tensor<1x20x5x5xf32>
  %y = nn.quantize %n {{y_scale = dense<0.04> : tensor<f32>, y_zero_point = dense<100> : tensor<ui8>}} : tensor<1x20x5x5xf32> -> tensor<1x20x5x5xui8>
  func.return %y : tensor<1x20x5x5xui8>
}}
"""


def test_a_folded_program_gives_the_unfolded_bits_everywhere() -> None:
    g, b_, m, v = (vector.tolist() for vector in _vectors(20, 7))
    module = parse(PROGRAM.format(g=g, b=b_, m=m, v=v))
    x = np.random.default_rng(8).integers(0, 256, (1, 20, 5, 5)).astype(np.uint8)
    (want,) = Interpreter(module).run([x])
    folded = compile_module(module, "ref", True, "fold-qdq")
    assert [op.name for op in folded.walk() if isinstance(op, nn.NNOp)].count("nn.qbatch_norm") == 1
    for target, padding, compiled, (got,) in everywhere(module, [x]):
        if target == "host":
            assert chosen_kernels(compiled, nn.QBatchNormOp) == {"qbatch_norm_onednn"}
        np.testing.assert_array_equal(got, want, err_msg=f"{target} padding={padding}")


def _host():  # type: ignore[no-untyped-def]
    from nnlayout.kernels.targets import get_target

    return get_target("host")
