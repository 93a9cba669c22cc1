"""oneDNN's nn.qconcat (kernels/onednn/quantized_concat.py) against nnlayout's reference
kernel, u8 and s8, zero points != 0: inputs of y's parameters joined exactly by oneDNN's
concat, inputs of other parameters requantized within one step (rare half steps), called and
bound (`on`), in NHWC (rank 4) and plain (rank 2), along channels and along width; the
refusal named; and a program through the default pipeline on every target, padding on and
off, interpreter and generated module, gives the reference's result (the concatenated
zero points read back as 0.0)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerType, NoneAttr, TensorType
from xdsl.rewriter import Rewriter
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.dialects.layout import LayoutAttr, LayoutSpec
from nnlayout.dialects.nn.base import ui8
from nnlayout.dialects.nn.quantized import QParams
from nnlayout.dialects.nn.shape_rules import concat_shape
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import quantized_concat as qc
from nnlayout.kernels.onednn.quantized import DATA_TYPES
from nnlayout.kernels.onednn.quantized_call import maps_fill
from nnlayout.kernels.onednn.quantized_reorder import data_md
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

pytestmark = [
    pytest.mark.onednn,
    pytest.mark.skipif(not b.available(), reason="oneDNN is not available here"),
]
i8 = IntegerType(8)
NHWC = LayoutSpec.parse("NHWC")
ZERO = {ui8: 131, i8: -7}
# DenseNet's channel counts are multiples of 32; these are not, nor of 8 (oneDNN's
# vector tails), and one input is larger than the others.
RANK4 = [(1, 5, 6, 7), (1, 19, 6, 7), (1, 3, 6, 7)]


def _tensor(element_type: object, shape: tuple[int, ...], layout: str = "") -> TensorType:
    return TensorType(element_type, shape, LayoutAttr(layout) if layout else NoneAttr())


def _params(element_type: object, requantized: bool) -> tuple[nn.QParams, nn.QParams]:
    """x's per-input parameters (all y's, or the second and third their own) and y's."""
    zero = ZERO[element_type]
    y = nn.QParams.make(0.021, zero, element_type)
    if not requantized:
        return nn.QParams.make([0.021] * 3, [zero] * 3, element_type), y
    return nn.QParams.make([0.021, 0.0437, 0.0113], [zero, zero // 2, 3], element_type), y


def qconcat(element_type, shapes, axis: int, requantized: bool, typed: bool) -> nn.QConcatOp:
    layout = "NHWC" if typed and len(shapes[0]) == 4 else ""
    inputs = [create_ssa_value(_tensor(element_type, s, layout)) for s in shapes]
    op = nn.QConcatOp(inputs, axis, _params(element_type, requantized))
    if layout:
        out = _tensor(element_type, concat_shape(list(shapes), axis), layout)
        Rewriter.replace_value_with_new_type(op.results[0], out)
    return op


def _integers(element_type: object, shape: tuple[int, ...], seed: int) -> np.ndarray:
    dtype = np.uint8 if element_type == ui8 else np.int8
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, info.max + 1, shape).astype(dtype)


def _both_ways(plain, typed, inputs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The reference's result, and the oneDNN kernel's called and bound (unpacked)."""
    want = REFERENCE_KERNELS[type(plain)](plain, inputs)
    chosen = registry().select(typed, get_target("onednn"), True)
    assert chosen is not None and chosen.kernel.name == "qconcat_onednn", chosen
    kernel = chosen.kernel
    nhwc = want.ndim == 4

    def pack(x: np.ndarray) -> np.ndarray:
        return NHWC.pack(x) if nhwc else x

    def unpack(x: np.ndarray) -> np.ndarray:
        return NHWC.unpack(x, want.shape) if nhwc else x.reshape(want.shape)

    packed = [pack(x) for x in inputs]
    called = unpack(kernel.impl(typed, packed))
    out = np.empty(pack(want).shape, want.dtype)
    bound = kernel.prepare(typed, None).on(packed, out)
    bound()
    np.testing.assert_array_equal(unpack(out), called)
    assert called.dtype == want.dtype
    return want, called


@pytest.mark.parametrize("element_type", [ui8, i8], ids=["u8", "s8"])
@pytest.mark.parametrize(
    ("shapes", "axis"),
    [
        (RANK4, 1),
        ([(1, 4, 6, 3), (1, 4, 6, 5), (1, 4, 6, 2)], 3),
        ([(3, 5), (3, 17), (3, 2)], 1),
        ([(1, 64, 7, 7), (1, 64, 7, 7), (1, 32, 7, 7)], 1),
    ],
    ids=["channels", "width", "rank2", "7x7"],
)
@pytest.mark.parametrize("requantized", [False, True], ids=["same", "requantized"])
def test_qconcat_is_the_reference(element_type, shapes, axis, requantized) -> None:
    inputs = [_integers(element_type, s, seed) for seed, s in enumerate(shapes)]
    plain = qconcat(element_type, shapes, axis, requantized, typed=False)
    typed = qconcat(element_type, shapes, axis, requantized, typed=True)
    want, got = _both_ways(plain, typed, inputs)
    difference = np.abs(got.astype(int) - want.astype(int))
    if not requantized:
        np.testing.assert_array_equal(got, want)
        return
    # The first input has y's parameters: copied exactly; the others within one step.
    first = [slice(None)] * want.ndim
    first[axis] = slice(0, shapes[0][axis])
    np.testing.assert_array_equal(got[tuple(first)], want[tuple(first)])
    assert difference.max() <= 1
    assert np.mean(difference) < 0.02
    # The zero points: x's zero point maps to y's, not to 0 (a kernel ignoring either fails).
    assert np.any(got != inputs[0].dtype.type(0))


def test_zero_points_map_to_the_result_zero_point() -> None:
    """Every input holding its own zero point: the result is y's zero point everywhere."""
    plain = qconcat(ui8, RANK4, 1, True, typed=False)
    typed = qconcat(ui8, RANK4, 1, True, typed=True)
    zeros = plain.qparams("x").zero_point
    inputs = [np.full(s, zeros[i], np.uint8) for i, s in enumerate(RANK4)]
    want, got = _both_ways(plain, typed, inputs)
    assert np.all(want == ZERO[ui8])
    np.testing.assert_array_equal(got, want)


def test_what_the_kernel_refuses_is_named() -> None:
    i32 = IntegerType(32)
    params = (nn.QParams.make([0.5, 0.5], [0, 0], i32), nn.QParams.make(0.5, 0, i32))
    a = create_ssa_value(_tensor(i32, (1, 2, 3, 3)))
    op = nn.QConcatOp([a, a], 1, params)
    reason = registry().lookup("qconcat_onednn").accepts(op, get_target("onednn"), True)
    assert reason is not None and "u8 or s8" in reason


def _program(element_type: str, zero: int) -> str:
    """Two quantizes of one input (own parameters), concatenated twice (one requantizing,
    one of equal parameters), max-pooled with pads (its padding the type's minimum, not 0)
    and dequantized."""
    t = f"tensor<{element_type}>"
    qa = f"y_scale = dense<0.021> : tensor<f32>, y_zero_point = dense<{zero}> : {t}"
    qb = f"y_scale = dense<0.0133> : tensor<f32>, y_zero_point = dense<{zero // 3}> : {t}"
    c = (
        f"x_scale = dense<[0.021, 0.0133]> : tensor<2xf32>, "
        f"x_zero_point = dense<[{zero}, {zero // 3}]> : tensor<2x{element_type}>, {qa}"
    )
    same = (
        f"x_scale = dense<[0.021, 0.021]> : tensor<2xf32>, "
        f"x_zero_point = dense<[{zero}, {zero}]> : tensor<2x{element_type}>, {qa}"
    )
    d = qa.replace("y_", "x_")

    def u(channels: int) -> str:
        return f"tensor<1x{channels}x6x5x{element_type}>"

    return (
        "func.func @main(%x: tensor<1x13x6x5xf32>) -> tensor<1x52x6x5xf32> {\n"
        f"  %a = nn.quantize %x {{{qa}}} : tensor<1x13x6x5xf32> -> {u(13)}\n"
        f"  %b = nn.quantize %x {{{qb}}} : tensor<1x13x6x5xf32> -> {u(13)}\n"
        f"  %c = nn.qconcat %a, %b axis 1 {{{c}}} : ({u(13)}, {u(13)}) -> {u(26)}\n"
        f"  %e = nn.qconcat %c, %c axis 1 {{{same}}} : ({u(26)}, {u(26)}) -> {u(52)}\n"
        f"  %m = nn.max_pool2d %e kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] "
        f"dilations [1, 1] : {u(52)} -> {u(52)}\n"
        f"  %d = nn.dequantize %m {{{d}}} : {u(52)} -> tensor<1x52x6x5xf32>\n"
        "  func.return %d : tensor<1x52x6x5xf32>\n}\n"
    )


@pytest.mark.parametrize(("element_type", "zero"), [("ui8", 117), ("i8", -9)])
def test_pipelines_give_the_references_results_on_every_target(element_type, zero) -> None:
    module = parse(_program(element_type, zero))
    # Negative values saturate at u8's 0 but not at the zero point: pooled padding of 0
    # instead of the minimum would show on the border.
    x = np.random.default_rng(5).standard_normal((1, 13, 6, 5)).astype(np.float32) - 1.0
    want = Interpreter(compile_module(module, "ref", False, DEFAULT_PIPELINE)).run([x])[0]
    chosen = set()
    for target, padding, compiled, got in everywhere(module, [x]):
        chosen |= chosen_kernels(compiled, nn.QConcatOp)
        # One step (0.021) where a requantized value lies at a half step.
        assert np.abs(got[0] - want).max() <= 0.021 * 1.001, (target, padding)
        assert np.mean(got[0] != want) < 0.02
    assert any("onednn" in name for name in chosen) or not b.runs_vnni(), chosen


def test_a_requantizing_reorder_that_drops_a_small_zero_point_is_caught() -> None:
    """A reorder ignoring x's zero point 3 (3 * 0.1 rounds to 0) maps a source of zero points
    to y's zero point all the same, so a check with that fill alone passes it; the check on
    every code does not (the dropped 0.3 of a step moves a third of the codes by one)."""
    md = data_md((1, 8, 3, 3), NHWC.text, DATA_TYPES[np.dtype(np.uint8)])
    x = QParams.make(0.01, 3, ui8)
    y = QParams.make(0.1, 128, ui8)
    keeps = qc._requantize_call(md, x, y)
    drops = qc._requantize_call(md, QParams.make(0.01, 0, ui8), y)
    assert qc._requantizes_every_code(keeps, x, y, np.dtype(np.uint8))
    assert maps_fill(drops, 3, 128)
    assert not qc._requantizes_every_code(drops, x, y, np.dtype(np.uint8))
