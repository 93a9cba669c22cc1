"""oneDNN's integer matmul (kernels/onednn/integer_matmul.py) against the reference kernel of
`nn.matmul_integer` (itself bit-exact against ONNX's MatMulInteger): exact, sums beyond 2^24
included (no f32 step), with a's zero point given at run time; and what it refuses. The
integer products' weights (matmul and convolution) are packed once when constant."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32, i8
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.kernels.onednn.integer_matmul import (
    IntegerMatmul,
    integer_matmul_refusal,
    integer_matmul_spec,
    prepare_integer_matmul,
)
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import DEFAULT_PIPELINE, compile_module, parse
from nnlayout.tests.kernels.test_onednn_quantized_matmul import (  # noqa: F401
    pytestmark,  # oneDNN with VNNI or AMX
)

# a's shape, N, a's type, with a's zero point, b's zero point
CASES = {
    "dense_u8": ((4, 64), 10, nn.ui8, True, 0),
    "batched_u8_b_zp": ((2, 3, 48), 16, nn.ui8, True, 5),
    "no_zero_point_s8": ((5, 32), 7, i8, False, 0),
    "beyond_2_24": ((2, 4096), 8, nn.ui8, True, 0),
    "attention_rows_u8": ((197, 1, 48), 32, nn.ui8, True, 0),  # torch's [L, 1, E] input
    "rank4_s8_b_zp": ((2, 3, 4, 32), 8, i8, False, 3),
}


def _op(a_shape: tuple[int, ...], n: int, a_type, with_zp: bool, b_zp: int):  # type: ignore[no-untyped-def]
    a = create_ssa_value(TensorType(a_type, a_shape))
    w = create_ssa_value(TensorType(i8, (a_shape[-1], n)))
    zp = create_ssa_value(TensorType(a_type, ())) if with_zp else None
    op = nn.MatmulIntegerOp(a, w, zp, np.asarray(b_zp))
    op.verify()
    return op


@pytest.mark.parametrize("name", sorted(CASES))
def test_integer_matmul_matches_the_reference(name: str) -> None:
    a_shape, n, a_type, with_zp, b_zp = CASES[name]
    rng = np.random.default_rng(0)
    dtype = np.uint8 if a_type == nn.ui8 else np.int8
    info = np.iinfo(dtype)
    op = _op(a_shape, n, a_type, with_zp, b_zp)
    assert integer_matmul_refusal(op) is None
    kernel = prepare_integer_matmul(op)
    assert kernel.q.a == (int(np.prod(a_shape[:-1])), a_shape[-1])  # one product of all rows
    w = rng.integers(-128, 128, (a_shape[-1], n)).astype(np.int8)
    if name == "beyond_2_24":  # sums of 4096 products of 255 * -128: -1.3e8
        w[:] = -128
    for run in range(2):  # a new zero point on each run, the weights packed once
        a = rng.integers(info.min, info.max + 1, a_shape).astype(dtype)
        if name == "beyond_2_24":
            a[:] = 255
        inputs = [a, w, *([np.array(run * 7 + 1, dtype)] if with_zp else [])]
        want = REFERENCE_KERNELS[nn.MatmulIntegerOp](op, inputs)
        got = np.empty(want.shape, np.int32)
        kernel(inputs, got)
        np.testing.assert_array_equal(got, want)
    if name == "beyond_2_24":
        assert np.abs(want).max() > 1 << 24


def test_refusals_name_what_onednn_lacks() -> None:
    per_column = nn.MatmulIntegerOp(
        create_ssa_value(TensorType(nn.ui8, (2, 4))),
        create_ssa_value(TensorType(i8, (4, 3))),
        None,
        np.array([0, 1, 2]),
    )
    assert integer_matmul_refusal(per_column) == (
        "b has a zero point per column; oneDNN's matmul takes one per tensor"
    )
    u8_weights = nn.MatmulIntegerOp(
        create_ssa_value(TensorType(nn.ui8, (2, 4))), create_ssa_value(TensorType(nn.ui8, (4, 3)))
    )
    assert integer_matmul_refusal(u8_weights) == (
        "b is uint8; oneDNN's int8 matmul takes s8 weights"
    )


@pytest.mark.parametrize("bias", [False, True], ids=["", "bias"])
@pytest.mark.parametrize("per_column", [False, True], ids=["scale", "scale-per-column"])
@pytest.mark.parametrize("name", ["dense_u8", "attention_rows_u8", "rank4_s8_b_zp", "beyond_2_24"])
def test_integer_matmul_to_float_matches_the_reference(
    name: str, per_column: bool, bias: bool
) -> None:
    """f32(sums) * scale [+ bias], the scale (a's times b's) new on every run, the bias too:
    the reference's bits (the exact sums, their f32 conversion, one f32 product, one f32
    sum, as Cast, Mul and Add round)."""
    a_shape, n, a_type, with_zp, b_zp = CASES[name]
    rng = np.random.default_rng(3)
    dtype = np.uint8 if a_type == nn.ui8 else np.int8
    info = np.iinfo(dtype)
    product = _op(a_shape, n, a_type, with_zp, b_zp)
    scale_shape = (n,) if per_column else ()
    scale = create_ssa_value(TensorType(f32, scale_shape))
    bias_value = create_ssa_value(TensorType(f32, (n,))) if bias else None
    op = nn.MatmulIntegerToFloatOp(
        product.a, product.b, scale, product.a_zero_point, b_zp, bias_value
    )
    op.verify()
    assert integer_matmul_refusal(op) is None
    kernel = prepare_integer_matmul(op)
    w = rng.integers(-128, 128, (a_shape[-1], n)).astype(np.int8)
    for run in range(2):
        a = rng.integers(info.min, info.max + 1, a_shape).astype(dtype)
        if name == "beyond_2_24":  # sums beyond 2^24, odd ones among them: f32 rounds those
            a = rng.integers(200, 256, a_shape).astype(dtype)
            w = rng.integers(-128, -100, w.shape).astype(np.int8)
        factors = rng.uniform(1e-5, 1e-3, scale_shape).astype(np.float32)
        inputs = [a, w, factors, *([np.array(run * 7 + 1, dtype)] if with_zp else [])]
        if bias:  # of the products' magnitude: the sum rounds
            inputs.append((rng.standard_normal(n) * 3).astype(np.float32))
        want = REFERENCE_KERNELS[nn.MatmulIntegerToFloatOp](op, inputs)
        got = np.empty(want.shape, np.float32)
        kernel(inputs, got)
        np.testing.assert_array_equal(got, want)
        if bias:  # the bias added after the scale, rounded once more (not one fused step)
            scaled = REFERENCE_KERNELS[nn.MatmulIntegerToFloatOp](
                nn.MatmulIntegerToFloatOp(product.a, product.b, scale, product.a_zero_point, b_zp),
                inputs[:-1],
            )
            assert np.array_equal(want, scaled + inputs[-1])
        if name == "beyond_2_24":
            sums = REFERENCE_KERNELS[nn.MatmulIntegerOp](product, [a, w, *inputs[3:]])
            assert np.any(sums.astype(np.float32).astype(np.int64) != sums)  # rounded


@pytest.mark.parametrize("constant", [True, False], ids=["constant", "argument"])
def test_weights_are_packed_once_only_where_they_are_load_time_constants(constant: bool) -> None:
    """A load-time constant b (the same read-only array on every call) is packed at the first
    call only; any other b on every call, new contents of the same read-only view included.
    (The product once packed its weights on every call, a fifth of a dynamically quantized
    ViT's time; then, for a while, it took any read-only array for a constant.)"""
    rng = np.random.default_rng(5)
    op = _op((3, 64), 10, nn.ui8, True, 0)
    kernel = IntegerMatmul(*integer_matmul_spec(op), constant)
    packs = []
    pack = kernel.pack
    kernel.pack = lambda w: (packs.append(1), pack(w))  # type: ignore[method-assign]
    base = rng.integers(-127, 128, (64, 10)).astype(np.int8)
    w = base.view()
    w.flags.writeable = False  # read-only, but its base is not: not a constant for all that
    for run in range(3):
        if not constant:
            base[...] = -base  # new contents behind the same read-only view
        a = rng.integers(0, 256, (3, 64)).astype(np.uint8)
        inputs = [a, w, np.array(run + 3, np.uint8)]
        want = REFERENCE_KERNELS[nn.MatmulIntegerOp](op, inputs)
        got = np.empty(want.shape, np.int32)
        kernel(inputs, got)
        np.testing.assert_array_equal(got, want)
    assert len(packs) == (1 if constant else 3)


INTEGER_PRODUCTS = {
    "matmul": (
        "nn.matmul_integer %q, %w zero_point %z : (tensor<1x4x64xui8>, tensor<64x16xi8>, "
        "tensor<ui8>) -> tensor<1x4x16xi32>",
        (64, 16),
        "tensor<1x4x16xi32>",
    ),
    "conv": (
        "nn.conv_integer %q, %w zero_point %z strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] "
        "groups 1 : (tensor<1x4x64xui8>, tensor<16x4x3x3xi8>, tensor<ui8>) -> tensor<1x16x64xi32>",
        (16, 4, 3, 3),
        "tensor<1x16x64xi32>",
    ),
}


@pytest.mark.parametrize("kind", sorted(INTEGER_PRODUCTS))
@pytest.mark.parametrize("target", ["onednn", "host"])
def test_weights_given_as_arguments_are_read_on_every_run(kind: str, target: str) -> None:
    """Weights that are a function argument, passed as a read-only view whose base changes
    between runs: each run of the compiled program gives the uncompiled one's result."""
    product, w_shape, result = INTEGER_PRODUCTS[kind]
    if kind == "conv":  # a 2-D image: [1, 4, 8, 8]
        product = product.replace("1x4x64xui8", "1x4x8x8xui8").replace("1x16x64", "1x16x8x8")
        result = result.replace("1x16x64", "1x16x8x8")
    x_type = "tensor<1x4x8x8xui8>" if kind == "conv" else "tensor<1x4x64xui8>"
    w_type = f"tensor<{'x'.join(map(str, w_shape))}xi8>"
    module = parse(
        f"""func.func @main(%q: {x_type}, %w: {w_type}, %z: tensor<ui8>) -> {result} {{
  %m = {product}
  func.return %m : {result}
}}"""
    )
    rng = np.random.default_rng(6)
    q = rng.integers(0, 256, (1, 4, 8, 8) if kind == "conv" else (1, 4, 64)).astype(np.uint8)
    base = rng.integers(-127, 128, w_shape).astype(np.int8)
    w = base.view()
    w.flags.writeable = False
    z = np.array(7, np.uint8)
    for padding in (True, False):
        compiled = Interpreter(compile_module(module, target, padding, DEFAULT_PIPELINE))
        for _ in range(2):
            base[...] = rng.integers(-127, 128, w_shape)
            (want,) = Interpreter(module).run([q, w, z])
            np.testing.assert_array_equal(compiled.run([q, w, z])[0], want)
