"""A small quantized CNN (QOperator form: quantize, a 3x3 convolution with a fused ReLU, u8
max pooling, a depthwise strided convolution, pointwise ones with a residual qadd, global
average pooling, a fully connected qmatmul, dequantize) through the pipelines on the oneDNN
targets: the census shows oneDNN's int8 kernels running every op (quantize, dequantize and
the global average pooling included), and the output is the reference kernels' within one quantization
step, padding on and off, layout passes alone and the whole default pipeline."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nnlayout.dialects import nn
from nnlayout.dialects.compute import ComputeOp
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn.binding import available
from nnlayout.reports.census import kernel_census, library_implementation
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    check_against_onnxruntime,
    compile_module,
    output_step,
    parse,
    quantize_with_onnxruntime,
    small_cnn,
)

pytestmark = [
    pytest.mark.onednn,
    pytest.mark.skipif(
        not (b.available() and b.runs_vnni()),
        reason="oneDNN's int8 code here has no VNNI or AMX (its kernels refuse it)",
    ),
]
Y_SCALE = 0.05  # the output's scale: one step


def _dense(values: np.ndarray, element_type: str) -> str:
    shape = "x".join(map(str, values.shape))
    return f"dense<{json.dumps(values.tolist())}> : tensor<{shape}x{element_type}>"


def _floats(values: np.ndarray) -> str:
    return f"dense<{json.dumps([round(float(v), 6) for v in values])}> : tensor<{len(values)}xf32>"


def _qconv(
    name: str, x: str, c_in: int, c_out: int, k: int, stride: int, groups: int, size: int, io: tuple
) -> str:
    """A qconv2d line named `name` on `x` (c_in x size x size), with its constants."""
    rng = np.random.default_rng(c_out * 7 + k)
    (x_scale, x_zp), (y_scale, y_zp), clamp = io
    w = rng.integers(-127, 128, (c_out, c_in // groups, k, k))
    bias = rng.integers(-400, 400, c_out)
    pad = k // 2
    out = (size + 2 * pad - k) // stride + 1
    props = (
        f"{clamp}w_scale = {_floats(rng.uniform(0.003, 0.01, c_out))}, "
        f"w_zero_point = {_dense(np.zeros(c_out, int), 'i8')}, "
        f"x_scale = dense<{x_scale}> : tensor<f32>, x_zero_point = dense<{x_zp}> : tensor<ui8>, "
        f"y_scale = dense<{y_scale}> : tensor<f32>, y_zero_point = dense<{y_zp}> : tensor<ui8>"
    )
    wt, ot = f"tensor<{c_out}x{c_in // groups}x{k}x{k}xi8>", f"tensor<1x{c_out}x{out}x{out}xui8>"
    return (
        f"  %{name}_w = nn.constant {_dense(w, 'i8')}\n"
        f"  %{name}_b = nn.constant {_dense(bias, 'i32')}\n"
        f"  %{name} = nn.qconv2d {x}, %{name}_w, %{name}_b strides [{stride}, {stride}] "
        f"pads [{pad}, {pad}, {pad}, {pad}] dilations [1, 1] groups {groups} {{{props}}} : "
        f"(tensor<1x{c_in}x{size}x{size}xui8>, {wt}, tensor<{c_out}xi32>) -> {ot}\n"
    )


def _q(prefix: str, scale: float, zero_point: int) -> str:
    return (
        f"{prefix}_scale = dense<{scale}> : tensor<f32>, "
        f"{prefix}_zero_point = dense<{zero_point}> : tensor<ui8>"
    )


def network() -> str:
    rng = np.random.default_rng(5)
    fc = rng.integers(-127, 128, (32, 10))
    u8 = "tensor<1x{}x{}x{}xui8>".format
    relu = "clamp_min = {} : i64, ".format
    return "".join(
        [
            "func.func @main(%x: tensor<1x8x16x16xf32>) -> tensor<1x10xf32> {\n",
            f"  %q = nn.quantize %x {{{_q('y', 0.02, 128)}}} : tensor<1x8x16x16xf32> -> "
            f"{u8(8, 16, 16)}\n",
            _qconv("c1", "%q", 8, 16, 3, 1, 1, 16, ((0.02, 128), (0.04, 3), relu(3))),
            "  %p = nn.max_pool2d %c1 kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] "
            f"dilations [1, 1] : {u8(16, 16, 16)} -> {u8(16, 16, 16)}\n",
            _qconv("c2", "%p", 16, 16, 3, 2, 16, 16, ((0.04, 3), (0.05, 120), "")),
            _qconv("c3", "%c2", 16, 32, 1, 1, 1, 8, ((0.05, 120), (0.06, 10), relu(10))),
            _qconv("c4", "%c3", 32, 32, 1, 1, 1, 8, ((0.06, 10), (0.07, 128), "")),
            f"  %r = nn.qadd %c3, %c4 {{{_q('a', 0.06, 10)}, {_q('b', 0.07, 128)}, "
            f"{_q('y', 0.08, 20)}}} : ({u8(32, 8, 8)}, {u8(32, 8, 8)}) -> {u8(32, 8, 8)}\n",
            f"  %g = nn.qglobal_avg_pool %r {{{_q('x', 0.08, 20)}, {_q('y', 0.03, 0)}}} : "
            f"{u8(32, 8, 8)} -> {u8(32, 1, 1)}\n",
            f"  %f = nn.flatten %g axis 1 : {u8(32, 1, 1)} -> tensor<1x32xui8>\n",
            f"  %m = nn.constant {_dense(fc, 'i8')}\n",
            f"  %y = nn.qmatmul %f, %m {{{_q('a', 0.03, 0)}, "
            f"b_scale = {_floats(rng.uniform(0.005, 0.02, 10))}, "
            f"b_zero_point = {_dense(np.zeros(10, int), 'i8')}, {_q('y', Y_SCALE, 128)}}} : "
            "(tensor<1x32xui8>, tensor<32x10xi8>) -> tensor<1x10xui8>\n",
            f"  %d = nn.dequantize %y {{{_q('x', Y_SCALE, 128)}}} : tensor<1x10xui8> -> "
            "tensor<1x10xf32>\n",
            "  func.return %d : tensor<1x10xf32>\n}\n",
        ]
    )


TARGETS = ["onednn", "host"] if available() else []


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("padding", [True, False])
def test_a_quantized_network_runs_on_onednn_int8_kernels(target: str, padding: bool) -> None:
    module = parse(network())
    inputs = [
        np.random.default_rng(seed).standard_normal((1, 8, 16, 16)).astype(np.float32)
        for seed in range(3)
    ]
    for x in inputs:
        want = Interpreter(module).run([x])[0]
        assert np.ptp(want) > 10 * Y_SCALE  # not a constant output
        for compiled in (
            compile_module(module, target, padding),
            compile_module(module, target, padding, DEFAULT_PIPELINE),
        ):
            got = Interpreter(compiled).run([x])[0]
            assert np.abs(got - want).max() <= Y_SCALE * 1.001
    planned = compile_module(module, target, padding, DEFAULT_PIPELINE)
    census = kernel_census(planned)
    assert census.kernels["qconv2d_onednn"] == 3 and census.kernels["qmatmul_onednn"] == 1
    # The residual qadd runs as the sum post-op of the convolution before it.
    assert census.kernels["qconv2d_add_onednn"] == 1 and "qadd_onednn" not in census.kernels
    assert census.kernels["max_pool2d_int8_onednn"] == 1
    for name in ("quantize_onednn", "dequantize_onednn", "qglobal_avg_pool_onednn"):
        assert census.kernels[name] == 1, census.kernels
    assert not census.fallbacks, census.fallbacks
    # The convolutions' and the product's code: VNNI or AMX (refused otherwise; a newer
    # oneDNN, NNLAYOUT_ONEDNN_LIBRARY, names AVX-512 with VNNI avx10_1_512).
    products = [
        library_implementation(op)
        for op in planned.walk()
        if isinstance(op, ComputeOp)
        and isinstance(op.inner, nn.QConv2dOp | nn.QConv2dAddOp | nn.QMatmulOp)
    ]
    assert len(products) == 5, products
    assert all(any(isa in name for isa in ("amx", "vnni", "avx10")) for name in products), products


def test_an_onnxruntime_quantized_cnn_runs_on_onednn_like_onnxruntime(tmp_path: Path) -> None:
    """A small CNN quantized by onnxruntime's quantize_static (QOperator form, per-channel s8
    weights, u8 activations): on onednn and host, padding on and off, interpreter and
    generated module, within one output step of onnxruntime's int8 output; its
    convolutions, residual add, max pooling and fully connected layer run oneDNN's int8
    kernels."""
    model = quantize_with_onnxruntime(small_cnn(), tmp_path, qoperator=True)
    module = check_against_onnxruntime(
        model, tmp_path, targets=TARGETS, seed=3, step=output_step(model)
    )
    census = kernel_census(compile_module(module, "onednn", True, DEFAULT_PIPELINE))
    for name in ("qconv2d_onednn", "max_pool2d_int8_onednn", "qmatmul_onednn"):
        assert census.kernels[name] >= 1, census.kernels
    # The residual add: a qadd, or the sum post-op of the convolution before it.
    assert census.kernels["qadd_onednn"] + census.kernels["qconv2d_add_onednn"] >= 1
