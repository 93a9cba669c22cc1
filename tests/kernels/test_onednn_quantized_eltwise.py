"""oneDNN's nn.qadd, nn.qmul (zero points of a and b 0) and integer max pooling
(kernels/onednn/quantized_eltwise.py) against nnlayout's reference kernels, on NHWC data as
dispatch lays it out: qadd and qmul within one step (rarely off), max pooling exact; refusals
named (qmul with a zero point != 0)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerType, NoneAttr, TensorType, f32
from xdsl.rewriter import Rewriter
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.dialects.layout import LayoutAttr, LayoutSpec
from nnlayout.dialects.nn import shape_of
from nnlayout.dialects.nn.base import ui8
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.providers import registry
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.targets import get_target
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    chosen_kernels,
    compile_module,
    everywhere,
    parse,
)

pytestmark = pytest.mark.onednn
i8 = IntegerType(8)
NHWC = LayoutSpec.parse("NHWC")
SHAPE = (1, 24, 10, 10)


def _tensor(element_type: object, shape: tuple[int, ...], layout: str = "") -> TensorType:
    return TensorType(element_type, shape, LayoutAttr(layout) if layout else NoneAttr())


def _typed(op: nn.NNOp, layout: str) -> nn.NNOp:
    if layout:
        result = op.results[0]
        Rewriter.replace_value_with_new_type(
            result, _tensor(result.type.element_type, result.type.get_shape(), layout)
        )
    return op


def _qbinary(
    op_type: type[nn.QAddOp | nn.QMulOp],
    element_type: object,
    layout: str,
    zero: tuple[int, int, int],
    rhs_shape: tuple[int, ...] = SHAPE,
    clamp: tuple[int | None, int | None] = (None, None),
) -> nn.NNOp:
    op = op_type(
        create_ssa_value(_tensor(element_type, SHAPE, layout)),
        create_ssa_value(_tensor(element_type, rhs_shape, layout)),
        tuple(
            nn.QParams.make(scale, z, element_type)
            for scale, z in zip((0.05, 0.07, 0.09), zero, strict=True)
        ),
        clamp,
    )
    return _typed(op, layout)


def qadd(
    element_type: object = ui8, layout: str = "", rhs_shape: tuple[int, ...] = SHAPE
) -> nn.NNOp:
    zero = (120, 130, 110) if element_type == ui8 else (-8, 5, 3)
    return _qbinary(nn.QAddOp, element_type, layout, zero, rhs_shape)


def qadd_clamped(element_type: object = ui8, layout: str = "") -> nn.NNOp:
    """A folded Relu6-like clamp inside the result's range (a clip post-op in oneDNN)."""
    zero = (120, 130, 110) if element_type == ui8 else (-8, 5, 3)
    clamp = (125, 200) if element_type == ui8 else (-5, 60)
    return _qbinary(nn.QAddOp, element_type, layout, zero, clamp=clamp)


def qmul(
    element_type: object = ui8, layout: str = "", zero: tuple[int, int, int] | None = None
) -> nn.NNOp:
    """a and b with zero point 0 (ReLU outputs), y with one != 0 (the kernel must add it)."""
    zero = zero or ((0, 0, 37) if element_type == ui8 else (0, 0, -11))
    return _qbinary(nn.QMulOp, element_type, layout, zero)


def max_pool(element_type: object = ui8, layout: str = "") -> nn.MaxPool2dOp:
    x = create_ssa_value(_tensor(element_type, SHAPE, layout))
    op = nn.MaxPool2dOp(x, kernel=(3, 3), strides=(2, 2), pads=(1, 1, 1, 1))
    return _typed(op, layout)


def _data(element_type: object, seed: int) -> np.ndarray:
    dtype = np.uint8 if element_type == ui8 else np.int8
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, info.max + 1, SHAPE).astype(dtype)


@pytest.mark.parametrize("element_type", [ui8, i8], ids=["u8", "s8"])
@pytest.mark.parametrize("build", [qadd, qmul, max_pool], ids=["qadd", "qmul", "max_pool"])
def test_dispatch_picks_the_int8_kernel_in_nhwc(build, element_type) -> None:
    op = build(element_type)
    chosen = registry().select(op, get_target("onednn"), True)
    assert chosen is not None and chosen.kernel.name.endswith("onednn"), chosen
    assert chosen.kernel.name in ("qadd_onednn", "qmul_onednn", "max_pool2d_int8_onednn")
    assert chosen.rejected == ()
    layouts = chosen.kernel.operand_and_result_layouts(op, get_target("onednn"))
    assert layouts == (("NHWC",) * len(op.operands), ("NHWC",))


@pytest.mark.parametrize("element_type", [ui8, i8], ids=["u8", "s8"])
@pytest.mark.parametrize(
    "build", [qadd, qadd_clamped, qmul, max_pool], ids=["qadd", "qadd-clamped", "qmul", "max_pool"]
)
def test_the_int8_kernels_compute_the_reference(build, element_type) -> None:
    plain, typed = build(element_type), build(element_type, "NHWC")
    inputs = [_data(element_type, seed) for seed in range(len(plain.operands))]
    want = REFERENCE_KERNELS[type(plain)](plain, inputs)
    kernel = registry().lookup(registry().select(typed, get_target("onednn"), True).kernel.name)
    got = kernel.impl(typed, [NHWC.pack(x) for x in inputs])
    got = NHWC.unpack(got, want.shape)
    assert got.dtype == want.dtype
    assert np.abs(got.astype(int) - want.astype(int)).max() <= 1
    assert np.mean(got != want) < 1e-2
    if build is max_pool:
        np.testing.assert_array_equal(got, want)
    if build is qadd_clamped:  # the clamp bites at both ends
        low, high = plain.clamp_min.value.data, plain.clamp_max.value.data
        assert (want.min(), want.max(), got.min(), got.max()) == (low, high, low, high)
    bound = kernel.prepare(typed, None)
    out = np.empty(NHWC.physical_shape(want.shape), want.dtype)
    bound.on([NHWC.pack(x) for x in inputs], out)()
    np.testing.assert_array_equal(NHWC.unpack(out, want.shape), got)


@pytest.mark.parametrize(
    ("shape", "rhs_shape"),
    [
        ((1, 197, 64), (1, 197, 64)),
        ((37, 5), (37, 5)),
        ((4, 12, 9, 9), (1, 12, 9, 9)),
        ((1, 4, 3, 9, 9), (1, 4, 1, 9, 9)),
        ((1, 4, 3, 9, 9), (4, 3, 9, 9)),
        ((1, 12, 9, 9), (4, 12, 9, 9)),
        ((3, 9, 9), (1, 4, 3, 9, 9)),
    ],
    ids=["rank3", "rank2", "position-bias", "window-mask", "lower-rank", "lhs-bias", "lhs-lower"],
)
@pytest.mark.parametrize("element_type", [ui8, i8], ids=["u8", "s8"])
def test_qadd_of_another_rank_runs_plain_in_onednn(shape, rhs_shape, element_type) -> None:
    """A transformer's residual add ([1, L, E]): plain operands and result, one flat run
    for oneDNN; Swin's relative position bias and window mask, broadcast operands (on
    either side: oneDNN's first source is the full one), their axes merged; within one step
    of the reference, called and bound."""
    zero = (120, 130, 110) if element_type == ui8 else (-8, 5, 3)
    op = nn.QAddOp(
        *(create_ssa_value(_tensor(element_type, s)) for s in (shape, rhs_shape)),
        tuple(
            nn.QParams.make(scale, z, element_type)
            for scale, z in zip((0.05, 0.07, 0.09), zero, strict=True)
        ),
    )
    chosen = registry().select(op, get_target("onednn"), True)
    assert chosen is not None and chosen.kernel.name == "qadd_onednn", chosen
    layouts = chosen.kernel.operand_and_result_layouts(op, get_target("onednn"))
    assert layouts == (("", ""), ("",))
    dtype = np.uint8 if element_type == ui8 else np.int8
    rng = np.random.default_rng(4)
    inputs = [
        rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max + 1, s).astype(dtype)
        for s in (shape, rhs_shape)
    ]
    want = REFERENCE_KERNELS[nn.QAddOp](op, inputs)
    kernel = registry().lookup("qadd_onednn")
    got = kernel.impl(op, inputs)
    assert np.abs(got.astype(int) - want.astype(int)).max() <= 1
    assert np.mean(got != want) < 1e-2
    out = np.empty(shape_of(op.output), dtype)
    kernel.prepare(op, None).on(inputs, out)()
    np.testing.assert_array_equal(out, got)


def test_what_the_int8_kernels_refuse_is_named() -> None:
    kernel = registry().lookup("qadd_onednn")
    assert kernel.refusal(qadd(rhs_shape=(1, 24, 1, 1)), get_target("onednn"), True) is None
    smaller = nn.QAddOp(
        create_ssa_value(_tensor(ui8, (1, 24, 1, 10))),
        create_ssa_value(_tensor(ui8, (1, 1, 10, 1))),
        tuple(nn.QParams.make(0.1, 3, ui8) for _ in range(3)),
    )
    assert "result's shape" in kernel.refusal(smaller, get_target("onednn"), True)
    gated = _qbinary(nn.QMulOp, ui8, "", (0, 0, 0), rhs_shape=(1, 24, 1, 1))
    reason = registry().lookup("qmul_onednn").refusal(gated, get_target("onednn"), True)
    assert "qmul_gate_onednn" in reason
    shifted = qmul(zero=(3, 0, 0))
    reason = registry().lookup("qmul_onednn").refusal(shifted, get_target("onednn"), True)
    assert "zero point" in reason
    f32_pool = nn.MaxPool2dOp(create_ssa_value(_tensor(f32, SHAPE)), kernel=(3, 3), strides=(2, 2))
    assert not registry().lookup("max_pool2d_int8_onednn").applies(f32_pool)


def _qmul_program(element_type: str, zero: int, b_zero: int) -> str:
    """Two quantizes of one input (zero point 0, as after a ReLU; or b's != 0, refused),
    multiplied, dequantized."""
    t = f"tensor<{element_type}>"
    qa = f"y_scale = dense<0.021> : tensor<f32>, y_zero_point = dense<0> : {t}"
    qb = f"y_scale = dense<0.013> : tensor<f32>, y_zero_point = dense<{b_zero}> : {t}"
    m = (
        f"a_scale = dense<0.021> : tensor<f32>, a_zero_point = dense<0> : {t}, "
        f"b_scale = dense<0.013> : tensor<f32>, b_zero_point = dense<{b_zero}> : {t}, "
        f"y_scale = dense<0.0007> : tensor<f32>, y_zero_point = dense<{zero}> : {t}"
    )
    d = f"x_scale = dense<0.0007> : tensor<f32>, x_zero_point = dense<{zero}> : {t}"
    u = f"tensor<1x13x6x5x{element_type}>"
    return (
        "func.func @main(%x: tensor<1x13x6x5xf32>) -> tensor<1x13x6x5xf32> {\n"
        f"  %a = nn.quantize %x {{{qa}}} : tensor<1x13x6x5xf32> -> {u}\n"
        f"  %b = nn.quantize %x {{{qb}}} : tensor<1x13x6x5xf32> -> {u}\n"
        f"  %m = nn.qmul %a, %b {{{m}}} : ({u}, {u}) -> {u}\n"
        f"  %d = nn.dequantize %m {{{d}}} : {u} -> tensor<1x13x6x5xf32>\n"
        "  func.return %d : tensor<1x13x6x5xf32>\n}\n"
    )


@pytest.mark.parametrize(
    ("element_type", "zero", "b_zero", "onednn"),
    [("ui8", 41, 0, True), ("i8", -9, 0, True), ("ui8", 41, 7, False)],
    ids=["u8", "s8", "b-zero-point"],
)
def test_qmul_pipelines_give_the_references_results_on_every_target(
    element_type, zero, b_zero, onednn
) -> None:
    module = parse(_qmul_program(element_type, zero, b_zero))
    # |x| as after a ReLU; negative values where the zero point is 0 saturate to u8's 0.
    x = np.abs(np.random.default_rng(9).standard_normal((1, 13, 6, 5)).astype(np.float32))
    want = Interpreter(compile_module(module, "ref", False, DEFAULT_PIPELINE)).run([x])[0]
    chosen = set()
    for target, padding, compiled, got in everywhere(module, [x]):
        chosen |= chosen_kernels(compiled, nn.QMulOp)
        # One step (0.0007) where a product lies at a half step.
        assert np.abs(got[0] - want).max() <= 0.0007 * 1.001, (target, padding)
        assert np.mean(got[0] != want) < 0.02
    # b's zero point != 0: qmul_onednn refuses it, qmul_zero_points_onednn runs it.
    assert ("qmul_onednn" in chosen) == (onednn and b.available()), chosen
    assert ("qmul_zero_points_onednn" in chosen) == (not onednn and b.available()), chosen
