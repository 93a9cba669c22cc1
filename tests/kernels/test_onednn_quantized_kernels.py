"""The registry's oneDNN kernels of nn.qconv2d and nn.qmatmul (kernels/onednn/
quantized_kernels.py): dispatch picks them on the oneDNN targets and says why where it
cannot, their layouts and workspace are oneDNN's, and what they compute, on the ops' own
arrays in those layouts, is the integer reference's result within one step."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerType, NoneAttr, TensorType, i32
from xdsl.rewriter import Rewriter
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.dialects.layout import LayoutAttr, LayoutSpec
from nnlayout.dialects.nn.base import ui8
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.providers import registry
from nnlayout.kernels.targets import get_target
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import DEFAULT_PIPELINE, chosen_kernels, compile_module, parse
from nnlayout.tests.kernels.test_onednn_quantized import integer_conv

pytestmark = [
    pytest.mark.onednn,
    pytest.mark.skipif(
        not (b.available() and b.runs_vnni()),
        reason="oneDNN's int8 code here has no VNNI or AMX (its kernels refuse it)",
    ),
]
i8 = IntegerType(8)


def _tensor(element_type: object, shape: tuple[int, ...], layout: str = "") -> TensorType:
    return TensorType(element_type, shape, LayoutAttr(layout) if layout else NoneAttr())


def qconv(
    layout: str = "",
    w_zero_point: int = 0,
    x_zero_point: int = 128,
    clamp: tuple[int | None, int | None] = (None, None),
    groups: int = 1,
    w_type: object = i8,
    per_channel: bool = True,
) -> nn.QConv2dOp:
    """A 3x3 convolution 16 -> 32 channels on 8x8, u8 in and out, per-channel weights."""
    x = create_ssa_value(_tensor(ui8, (1, 16, 8, 8), layout))
    w = create_ssa_value(_tensor(w_type, (32, 16 // groups, 3, 3)))
    bias = create_ssa_value(_tensor(i32, (32,)))
    op = nn.QConv2dOp(
        x,
        w,
        bias,
        (
            nn.QParams.make(0.02, x_zero_point, ui8),
            nn.QParams.make(np.linspace(0.005, 0.02, 32), [w_zero_point] * 32, w_type, 0)
            if per_channel
            else nn.QParams.make(0.01, w_zero_point, w_type),
            nn.QParams.make(0.1, 5, ui8),
        ),
        pads=(1, 1, 1, 1),
        groups=groups,
        clamp=clamp,
    )
    if layout:
        Rewriter.replace_value_with_new_type(op.output, _tensor(ui8, (1, 32, 8, 8), layout))
    return op


@pytest.mark.parametrize("target", ["onednn", "host"])
def test_dispatch_picks_onednn_int8_convolution(target: str) -> None:
    op = qconv()
    chosen = registry().select(op, get_target(target), True)
    assert chosen is not None and chosen.kernel.name == "qconv2d_onednn"
    layouts = chosen.kernel.operand_and_result_layouts(op, get_target(target))
    assert layouts == (("NHWC", "", ""), ("NHWC",))
    assert chosen.kernel.workspace(op, get_target(target)) >= 0


@pytest.mark.parametrize(
    ("op", "reason"),
    [
        (qconv(w_zero_point=1), "the weights have a zero point != 0"),
        (qconv(w_type=ui8), "the weights are uint8; oneDNN's int8 convolutions take s8"),
    ],
)
def test_refusals_name_what_onednn_lacks(op: nn.QConv2dOp, reason: str) -> None:
    kernel = registry().lookup("qconv2d_onednn")
    assert reason in kernel.refusal(op, get_target("onednn"), True)


def _reference(x, w, bias, op: nn.QConv2dOp, groups: int = 1) -> np.ndarray:
    xq, wq, yq = op.qparams("x"), op.qparams("w"), op.qparams("y")
    acc = integer_conv(x, w, int(xq.zero_point), 1, 1, groups) + bias.reshape(1, -1, 1, 1)
    scale = np.float64(xq.scale) * wq.scale.astype(np.float64) / np.float64(yq.scale)
    low = 0 if op.clamp_min is None else op.clamp_min.value.data
    return np.clip(np.rint(acc * scale.reshape(1, -1, 1, 1)) + int(yq.zero_point), low, 255)


@pytest.mark.parametrize("layout", ["", "NHWC"])
@pytest.mark.parametrize("clamp", [(None, None), (5, None), (20, 200)])
@pytest.mark.parametrize("per_channel", [True, False], ids=["per_channel", "per_tensor"])
def test_the_kernel_computes_qlinearconv(
    layout: str, clamp: tuple[int | None, int | None], per_channel: bool
) -> None:
    op = qconv(layout, clamp=clamp, per_channel=per_channel)
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (1, 16, 8, 8)).astype(np.uint8)
    w = rng.integers(-127, 128, (32, 16, 3, 3)).astype(np.int8)
    bias = rng.integers(-3000, 3000, 32).astype(np.int32)
    kernel = registry().lookup("qconv2d_onednn")
    spec = LayoutSpec.parse(layout) if layout else None
    given = x if spec is None else spec.pack(x)
    got = kernel.impl(op, [given, w, bias])
    if spec is not None:
        got = spec.unpack(got, (1, 32, 8, 8))
        assert not kernel.implementation_of(op).startswith("ref")
    want = _reference(x, w, bias, op)
    if clamp[1] is not None:
        want = np.minimum(want, clamp[1])
    assert got.dtype == np.uint8 and np.abs(got.astype(int) - want).max() <= 1
    assert np.mean(got != want) < 1e-2


def test_a_prepared_kernel_packs_its_weights_once() -> None:
    """Weights that are load-time constants (what `constant_operands` says of a planned op;
    of a detached one, as here, nothing: set by hand) are packed once, and a kernel bound
    to its arrays runs on new contents of its source; other weights are packed again on
    each call, also read-only views whose base changes."""
    op = qconv("NHWC")
    rng = np.random.default_rng(1)
    w = rng.integers(-127, 128, (32, 16, 3, 3)).astype(np.int8)
    bias = rng.integers(-3000, 3000, 32).astype(np.int32)
    bias.flags.writeable = False
    spec = LayoutSpec.parse("NHWC")
    out = np.empty(spec.physical_shape((1, 32, 8, 8)), np.uint8)
    source = np.empty(spec.physical_shape((1, 16, 8, 8)), np.uint8)
    for constant in (True, False):
        base = w.copy()
        weights = base.view()
        weights.flags.writeable = False
        bound = registry().lookup("qconv2d_onednn").prepare(op, None)
        assert not bound.packed_from.constant  # a detached op: nothing is known constant
        bound.packed_from.constant = constant
        call = bound.on([source, weights, bias], out)
        for seed in (2, 3):
            x = np.random.default_rng(seed).integers(0, 256, (1, 16, 8, 8)).astype(np.uint8)
            source[...] = spec.pack(x)
            if not constant:
                base[...] = -base  # new contents behind the same read-only view
            call()
            want = _reference(x, weights, bias, op)
            got = spec.unpack(out, (1, 32, 8, 8))
            assert np.abs(got.astype(int) - want).max() <= 1
        assert bound.packed_from.stale(weights, bias) is not constant


def test_a_bias_given_as_an_argument_is_read_on_every_run() -> None:
    """A qconv2d whose weights are a constant and whose bias is a function argument, passed
    as a read-only view whose base changes between runs: each run of the compiled program
    gives the uncompiled one's result (the kernel packs weights and bias together, and the
    bias is not a load-time constant)."""
    rng = np.random.default_rng(0)
    weights = rng.integers(-127, 128, (16, 8, 3, 3))
    dense = np.array2string(weights, separator=", ", threshold=1 << 20).replace("\n", "")
    x_type, y_type, w_type = "tensor<1x8x6x6xui8>", "tensor<1x16x6x6xui8>", "tensor<16x8x3x3xi8>"
    params = (
        "w_scale = dense<0.01> : tensor<16xf32>, w_zero_point = dense<0> : tensor<16xi8>, "
        "x_scale = dense<0.05> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, "
        "y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<3> : tensor<ui8>"
    )
    module = parse(
        f"""func.func @main(%x: {x_type}, %b: tensor<16xi32>) -> {y_type} {{
  %w = nn.constant dense<{dense}> : {w_type}
  %y = nn.qconv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {{{params}}} : ({x_type}, {w_type}, tensor<16xi32>) -> {y_type}
  func.return %y : {y_type}
}}"""
    )
    x = rng.integers(0, 256, (1, 8, 6, 6)).astype(np.uint8)
    base = np.zeros(16, np.int32)
    bias = base.view()
    bias.flags.writeable = False
    for padding in (True, False):
        compiled = compile_module(module, "onednn", padding, DEFAULT_PIPELINE)
        assert chosen_kernels(compiled, nn.QConv2dOp) == {"qconv2d_onednn"}
        program = Interpreter(compiled)
        for value in (0, 100000, -7):
            base[...] = value
            (want,) = Interpreter(module).run([x, bias])
            np.testing.assert_array_equal(program.run([x, bias])[0], want)


def test_a_bound_call_outlives_the_kernel_that_made_it() -> None:
    """The call `on` returns keeps what its primitive points at (scratchpad, packed weights)
    alive after the kernel is dropped: it once wrote into a freed scratchpad."""
    op = qconv("NHWC")
    rng = np.random.default_rng(4)
    w = rng.integers(-127, 128, (32, 16, 3, 3)).astype(np.int8)
    bias = rng.integers(-3000, 3000, 32).astype(np.int32)
    w.flags.writeable = bias.flags.writeable = False
    spec = LayoutSpec.parse("NHWC")
    x = rng.integers(0, 256, (1, 16, 8, 8)).astype(np.uint8)
    out = np.empty(spec.physical_shape((1, 32, 8, 8)), np.uint8)
    call = registry().lookup("qconv2d_onednn").prepare(op, None).on([spec.pack(x), w, bias], out)
    gc.collect()
    litter = [np.full(1 << 16, 255, np.uint8) for _ in range(64)]  # reuse freed memory
    call()
    got = spec.unpack(out, (1, 32, 8, 8))
    assert np.abs(got.astype(int) - _reference(x, w, bias, op)).max() <= 1
    assert all(np.all(a == 255) for a in litter)


def test_qmatmul_is_dispatched_and_computes_qlinearmatmul() -> None:
    a = create_ssa_value(_tensor(ui8, (4, 64)))
    b = nn.ConstantOp(_tensor(i8, (64, 16)), external="b").output  # packed once
    op = nn.QMatmulOp(
        a,
        b,
        None,
        (
            nn.QParams.make(0.05, 100, ui8),
            nn.QParams.make(np.linspace(0.01, 0.02, 16), [0] * 16, i8, 1),
            nn.QParams.make(0.5, 128, ui8),
        ),
    )
    chosen = registry().select(op, get_target("onednn"), True)
    assert chosen is not None and chosen.kernel.name == "qmatmul_onednn"
    rng = np.random.default_rng(0)
    av = rng.integers(0, 256, (4, 64)).astype(np.uint8)
    bv = rng.integers(-127, 128, (64, 16)).astype(np.int8)
    got = chosen.kernel.impl(op, [av, bv])
    acc = (av.astype(np.int64) - 100) @ bv.astype(np.int64)
    scale = np.float64(np.float32(0.05)) * op.qparams("b").scale / np.float64(np.float32(0.5))
    want = np.clip(np.rint(acc * scale) + 128, 0, 255)
    assert np.abs(got.astype(int) - want).max() <= 1


@pytest.mark.parametrize("clamp", [(None, None), (90, 140)])
@pytest.mark.parametrize("x_zero_point", [0, 3])
def test_a_one_pixel_convolution_runs_as_onednn_matmul(
    clamp: tuple[int | None, int | None], x_zero_point: int
) -> None:
    """A squeeze-and-excitation block's 1x1 convolution of one pixel: oneDNN v3.2 offers only
    its reference convolution for it (the requantizing post-op has the destination's dims),
    so the kernel runs its int8 matmul, with the same post-ops: the reference's result, on
    the op's NHWC arrays, called and bound."""
    from nnlayout.kernels.reference import REFERENCE_KERNELS

    x = create_ssa_value(_tensor(ui8, (1, 96, 1, 1), "NHWC"))
    op = nn.QConv2dOp(
        x,
        create_ssa_value(_tensor(i8, (24, 96, 1, 1))),
        create_ssa_value(_tensor(i32, (24,))),
        (
            nn.QParams.make(0.05, x_zero_point, ui8),
            nn.QParams.make(np.linspace(0.002, 0.01, 24), [0] * 24, i8, 0),
            nn.QParams.make(0.6, 100, ui8),
        ),
        clamp=clamp,
    )
    Rewriter.replace_value_with_new_type(op.output, _tensor(ui8, (1, 24, 1, 1), "NHWC"))
    chosen = registry().select(op, get_target("host"), True)
    assert chosen is not None and chosen.kernel.name == "qconv2d_onednn", chosen
    kernel = registry().lookup("qconv2d_onednn")
    assert kernel.implementation_of(op).startswith("brg:")  # the matmul's
    rng = np.random.default_rng(1)
    inputs = [
        rng.integers(0, 256, (1, 96, 1, 1)).astype(np.uint8),
        rng.integers(-127, 128, (24, 96, 1, 1)).astype(np.int8),
        rng.integers(-3000, 3000, 24).astype(np.int32),
    ]
    want = REFERENCE_KERNELS[nn.QConv2dOp](op, inputs)
    assert len(np.unique(want)) > 5  # not saturated
    if clamp[0] is not None:  # the clamp bites at both ends
        assert (want.min(), want.max()) == clamp
    nhwc = want.reshape(1, 1, 1, 24)  # one pixel: NCHW's bytes
    np.testing.assert_array_equal(
        kernel.impl(op, [inputs[0].reshape(1, 1, 1, 96), *inputs[1:]]), nhwc
    )
    out = np.empty_like(nhwc)
    kernel.prepare(op, None).on([inputs[0].reshape(1, 1, 1, 96), *inputs[1:]], out)()
    np.testing.assert_array_equal(out, nhwc)
