"""oneDNN's nn.quantize, nn.dequantize, nn.qglobal_avg_pool and nn.qavg_pool2d (kernels/
onednn/quantized_reorder.py) against nnlayout's reference kernels, u8 and s8, zero points
!= 0, in the layouts dispatch gives them (NHWC for rank 4), called and bound (`on`): quantize
(exact half steps and saturation included; non-finite input runs the reference) and
dequantize exact, the poolings within one step on rare half-step values, an average
pooling's padding holding the zero point; refusals named; the pipelines on every target,
padding on and off, interpreter and generated module, give the interpreter's results; and
threads running one generated module take turns through its input quantize."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerType, NoneAttr, TensorType, f32
from xdsl.rewriter import Rewriter
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.dialects.layout import LayoutAttr, LayoutSpec, layout_of
from nnlayout.dialects.nn.base import ui8
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import quantized_reorder as qr
from nnlayout.kernels.providers import registry
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.targets import get_target
from nnlayout.lowering.to_numpy import import_generated, translate
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    PIPELINE_TARGETS,
    chosen_kernels,
    compile_module,
    parse,
)

pytestmark = [
    pytest.mark.onednn,
    pytest.mark.skipif(not b.available(), reason="oneDNN is not available here"),
]
i8 = IntegerType(8)
NHWC = LayoutSpec.parse("NHWC")
SHAPE = (1, 24, 7, 9)
ZERO = {ui8: 131, i8: -7}


def _tensor(element_type: object, shape: tuple[int, ...], layout: str = "") -> TensorType:
    return TensorType(element_type, shape, LayoutAttr(layout) if layout else NoneAttr())


def _retype(op: nn.NNOp, new_type: TensorType) -> None:
    Rewriter.replace_value_with_new_type(op.results[0], new_type)


def _layout(shape: tuple[int, ...]) -> str:
    return "NHWC" if len(shape) == 4 else ""


def quantize(element_type: object, shape: tuple[int, ...] = SHAPE, typed: bool = False):
    params = nn.QParams.make(0.0173, ZERO[element_type], element_type)
    op = nn.QuantizeOp(create_ssa_value(_tensor(f32, shape)), params)
    if typed:
        _retype(op, _tensor(element_type, shape, _layout(shape)))
    return op


def dequantize(element_type: object, shape: tuple[int, ...] = SHAPE, typed: bool = False):
    params = nn.QParams.make(0.0173, ZERO[element_type], element_type)
    layout = _layout(shape) if typed else ""
    return nn.DequantizeOp(create_ssa_value(_tensor(element_type, shape, layout)), params)


def pool(element_type: object, typed: bool = False):
    x = nn.QParams.make(0.08, ZERO[element_type], element_type)
    y = nn.QParams.make(0.03, ZERO[element_type] // 2, element_type)
    layout = "NHWC" if typed else ""
    op = nn.QGlobalAvgPoolOp(create_ssa_value(_tensor(element_type, SHAPE, layout)), (x, y))
    if typed:
        _retype(op, _tensor(element_type, (1, SHAPE[1], 1, 1), "NHWC"))
    return op


def _integers(element_type: object, shape: tuple[int, ...], seed: int) -> np.ndarray:
    dtype = np.uint8 if element_type == ui8 else np.int8
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, info.max + 1, shape).astype(dtype)


def _floats(shape: tuple[int, ...], seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 3
    # Exact half steps and values far out of range (saturated).
    x.flat[:40] = (np.arange(40, dtype=np.float32) - 20.5) * np.float32(0.0173)
    x.flat[40:44] = (1e6, -1e6, 1e9, -1e9)
    return x


def _pack(x: np.ndarray, layout: str) -> np.ndarray:
    return NHWC.pack(x) if layout == "NHWC" else x


def _unpack(x: np.ndarray, layout: str, shape: tuple[int, ...]) -> np.ndarray:
    return NHWC.unpack(x, shape) if layout == "NHWC" else x.reshape(shape)


def _both_ways(plain, typed, inputs: list[np.ndarray], in_layout: str, out_layout: str):
    """The reference's result, and the oneDNN kernel's called and bound (unpacked)."""
    want = REFERENCE_KERNELS[type(plain)](plain, inputs)
    chosen = registry().select(typed, get_target("onednn"), True)
    assert chosen is not None and chosen.kernel.family == "onednn", chosen
    kernel = registry().lookup(chosen.kernel.name)
    packed = [_pack(x, in_layout) for x in inputs]
    called = _unpack(kernel.impl(typed, packed), out_layout, want.shape)
    out = np.empty(_pack(want, out_layout).shape, want.dtype)
    kernel.prepare(typed, None).on(packed, out)()
    bound = _unpack(out, out_layout, want.shape)
    np.testing.assert_array_equal(bound, called)
    assert called.dtype == want.dtype
    return want, called


@pytest.mark.parametrize("element_type", [ui8, i8], ids=["u8", "s8"])
@pytest.mark.parametrize("shape", [SHAPE, (3, 50)], ids=["rank4", "rank2"])
def test_quantize_is_the_reference_at_half_steps(element_type, shape) -> None:
    x = _floats(shape, 1)
    layout = _layout(shape)
    want, got = _both_ways(
        quantize(element_type, shape), quantize(element_type, shape, True), [x], "", layout
    )
    np.testing.assert_array_equal(got, want)  # half steps and saturated values included


def _near_half_steps(scale: np.float32, zero: int, dtype: type, size: int) -> np.ndarray:
    """f32 values within 3 f32 steps of (k + 0.5) * scale, for every k of the type's range
    and a few beyond: where x * (1 / scale), or x / scale + zp rounded once, rounds the
    other way from ONNX's round_half_even(x / scale) + zp."""
    rng = np.random.default_rng(11)
    info = np.iinfo(dtype)
    k = rng.integers(info.min - zero - 3, info.max - zero + 3, size).astype(np.float64)
    x = ((k + 0.5) * np.float64(scale)).astype(np.float32)
    for _ in range(3):
        shift = rng.integers(-1, 2, size)
        x = np.where(shift > 0, np.nextafter(x, np.float32(np.inf)), x)
        x = np.where(shift < 0, np.nextafter(x, np.float32(-np.inf)), x)
    return x


@pytest.mark.parametrize("element_type", [ui8, i8], ids=["u8", "s8"])
def test_quantize_is_exact_within_f32_steps_of_half_steps(element_type) -> None:
    """oneDNN's quantizing reorder (dst scale and zero point) multiplies by 1 / y_scale and
    adds y_zp before rounding: about a fifth of these values came out one step off. The
    kernel's division, rounding and shift are ONNX's, exactly (the assertion on `wrong`
    shows that the values do probe the difference)."""
    shape = (1, 16, 30, 31)
    dtype = np.uint8 if element_type == ui8 else np.int8
    scale = np.float32(0.0173)
    x = _near_half_steps(scale, ZERO[element_type], dtype, int(np.prod(shape))).reshape(shape)
    want, got = _both_ways(
        quantize(element_type, shape), quantize(element_type, shape, True), [x], "", "NHWC"
    )
    np.testing.assert_array_equal(got, want)
    info = np.iinfo(dtype)
    once = np.rint(x * (np.float32(1) / scale) + np.float32(ZERO[element_type]))
    wrong = np.clip(once, info.min, info.max).astype(dtype)
    assert np.count_nonzero(wrong != want) > x.size // 20


@pytest.mark.parametrize("out_layout", ["NHWC", ""], ids=["to-nhwc", "to-plain"])
def test_quantize_of_an_nhwc_input_keeps_its_order(out_layout) -> None:
    """The division is elementwise, so an x typed NHWC stays in NHWC order through it; the
    copy after it starts from x's layout (dispatch gives quantize a plain x, but the kernel
    takes what the types say)."""
    op = nn.QuantizeOp(
        create_ssa_value(_tensor(f32, SHAPE, "NHWC")), nn.QParams.make(0.0173, 131, ui8)
    )
    _retype(op, _tensor(ui8, SHAPE, out_layout))
    x = _floats(SHAPE, 12)
    out = np.empty(_pack(x, out_layout).shape, np.uint8)
    registry().lookup("quantize_onednn").prepare(op, None)([NHWC.pack(x)], out)
    want = REFERENCE_KERNELS[type(op)](quantize(ui8), [x])
    np.testing.assert_array_equal(_unpack(out, out_layout, SHAPE), want)


@pytest.mark.parametrize("element_type", [ui8, i8], ids=["u8", "s8"])
def test_quantize_zero_point_check_sees_a_dropped_zero_point(element_type) -> None:
    """The check the kernel runs when bound (`_keeps_zero_point`) passes its own division
    and fails one whose shift lost the zero point (what oneDNN v3.2's reorder did on some
    shapes): then the reference kernel runs."""
    op = quantize(element_type, typed=True)
    dropped = nn.QuantizeOp(
        create_ssa_value(_tensor(f32, SHAPE)), nn.QParams.make(0.0173, 0, element_type)
    )
    assert qr._keeps_zero_point(op, qr._primitive_call(op, ("", "")))
    assert not qr._keeps_zero_point(op, qr._primitive_call(dropped, ("", "")))


@pytest.mark.parametrize("element_type", [ui8, i8], ids=["u8", "s8"])
def test_quantize_of_non_finite_input_is_the_reference(element_type) -> None:
    x = _floats(SHAPE, 2)
    x.flat[[5, 77, 300]] = (np.nan, np.inf, -np.inf)
    want, got = _both_ways(
        quantize(element_type), quantize(element_type, typed=True), [x], "", "NHWC"
    )
    np.testing.assert_array_equal(got, want)
    assert got.reshape(-1)[5] == ZERO[element_type]  # NaN: the zero point (oneDNN writes 0)


@pytest.mark.parametrize(
    "values",
    [(np.inf,), (-np.inf,), (np.nan,), (3e19, -3e19)],
    ids=["inf", "-inf", "nan", "squares-overflow"],
)
def test_quantize_guard_catches_each_non_finite_input(values) -> None:
    """The finiteness test is x . x: one infinity of either sign or a NaN alone makes it
    non-finite; finite values whose squares overflow take the reference kernel too (the
    same result: saturated)."""
    x = _floats(SHAPE, 5)
    x.flat[100 : 100 + len(values)] = values
    want, got = _both_ways(quantize(ui8), quantize(ui8, typed=True), [x], "", "NHWC")
    np.testing.assert_array_equal(got, want)


def test_quantize_called_again_on_other_inputs_and_outputs() -> None:
    """A called (not bound) quantize binds its oneDNN calls to the destination it is given
    and keeps them for that destination: new inputs into the same destination, and another
    destination, each give the reference's result."""
    plain, typed = quantize(ui8), quantize(ui8, typed=True)
    kernel = registry().select(typed, get_target("onednn"), True).kernel  # type: ignore[union-attr]
    bound = kernel.prepare(typed, None)
    first, second = (np.empty(NHWC.pack(np.empty(SHAPE)).shape, np.uint8) for _ in range(2))
    for seed, out in ((6, first), (7, first), (8, second), (9, first)):
        x = _floats(SHAPE, seed)
        bound([x], out)
        want = REFERENCE_KERNELS[type(plain)](plain, [x])
        np.testing.assert_array_equal(NHWC.unpack(out, SHAPE), want)


@pytest.mark.parametrize("bad", [np.nan, np.inf], ids=["nan", "inf"])
def test_quantize_into_its_bound_destination_keeps_the_guard(bad) -> None:
    """A model input's quantize, called each run into the destination it bound its calls
    to, takes the short path (the source's address alone is pointed: `_same_kind`); that
    path still tests the input: a NaN or an infinity in a later run gives the reference's
    result, and an input of another kind (strided, float64) takes the general path."""
    plain, typed = quantize(ui8), quantize(ui8, typed=True)
    kernel = registry().select(typed, get_target("onednn"), True).kernel  # type: ignore[union-attr]
    bound = kernel.prepare(typed, None)
    out = np.empty(NHWC.pack(np.empty(SHAPE)).shape, np.uint8)
    bad_input = _floats(SHAPE, 11)
    bad_input.flat[[3, 200]] = bad
    strided = np.asfortranarray(_floats(SHAPE, 12))
    inputs = [_floats(SHAPE, 10), bad_input, strided, strided.astype(np.float64)]
    for x in inputs:
        assert bound._same_kind(x) == (x is not strided and x.dtype == np.float32)
        bound([x], out)
        assert bound.bound_out is out
        want = REFERENCE_KERNELS[type(plain)](plain, [x.astype(np.float32)])
        np.testing.assert_array_equal(NHWC.unpack(out, SHAPE), want)


@pytest.mark.parametrize("element_type", [ui8, i8], ids=["u8", "s8"])
@pytest.mark.parametrize("shape", [SHAPE, (3, 50)], ids=["rank4", "rank2"])
def test_dequantize_is_the_reference(element_type, shape) -> None:
    x = _integers(element_type, shape, 3)
    want, got = _both_ways(
        dequantize(element_type, shape),
        dequantize(element_type, shape, True),
        [x],
        _layout(shape),
        "",
    )
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("element_type", [ui8, i8], ids=["u8", "s8"])
@pytest.mark.parametrize("shape", [(1, 64, 7, 7), (1, 64, 5, 5), (1, 512, 7, 7)])
def test_shapes_where_onednn_drops_zero_points_are_exact(element_type, shape) -> None:
    """oneDNN v3.2's jit:uni reorder ignores the zero point of a u8/s8 NHWC -> f32 NCHW
    reorder of these shapes (not of 1x64x6x6): the kernels find out when bound (maps_fill)
    and run the reference. DenseNet-121's last dense block (1x512x7x7 and up) hit it: 200
    output steps from onnxruntime's int8, top-1 agreement 0%."""
    x = _integers(element_type, shape, 6)
    want, got = _both_ways(
        dequantize(element_type, shape), dequantize(element_type, shape, True), [x], "NHWC", ""
    )
    np.testing.assert_array_equal(got, want)
    floats = _floats(shape, 7)
    want, got = _both_ways(
        quantize(element_type, shape), quantize(element_type, shape, True), [floats], "", "NHWC"
    )
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("element_type", [ui8, i8], ids=["u8", "s8"])
def test_global_average_pooling_is_the_reference_within_one_step(element_type) -> None:
    if not b.runs_vnni():
        pytest.skip("oneDNN's int8 code here has no VNNI or AMX (its kernels refuse it)")
    x = _integers(element_type, SHAPE, 4)
    want, got = _both_ways(pool(element_type), pool(element_type, True), [x], "NHWC", "NHWC")
    assert np.abs(got.astype(int) - want.astype(int)).max() <= 1
    assert np.mean(got != want) < 0.05


WINDOWS = {
    "3x3-pads-counted": {"kernel": (3, 3), "pads": (1, 1, 1, 1), "count_include_pad": True},
    "2x2-stride2": {"kernel": (2, 2), "strides": (2, 2)},
    "3x3-stride2-pads-counted": {
        "kernel": (3, 3),
        "strides": (2, 2),
        "pads": (1, 0, 1, 2),
        "count_include_pad": True,
    },
    "3x3-dilated": {"kernel": (3, 3), "dilations": (2, 2)},
    "5x5-ceil-exact": {"kernel": (5, 5), "strides": (2, 2), "ceil_mode": True},
}


def avg_pool(element_type: object, window: dict, typed: bool = False, shape=SHAPE, y_scale=0.05):
    x = nn.QParams.make(0.08, ZERO[element_type], element_type)
    y = nn.QParams.make(y_scale, ZERO[element_type] // 2, element_type)
    layout = "NHWC" if typed else ""
    op = nn.QAvgPool2dOp(create_ssa_value(_tensor(element_type, shape, layout)), (x, y), **window)
    if typed:
        _retype(op, _tensor(element_type, nn.shape_of(op.output), "NHWC"))
    return op


@pytest.mark.parametrize("y_scale", [0.08, 0.05], ids=["x-scale", "other-scale"])
@pytest.mark.parametrize("window", WINDOWS.values(), ids=WINDOWS.keys())
@pytest.mark.parametrize("element_type", [ui8, i8], ids=["u8", "s8"])
def test_average_pooling_is_the_reference_within_one_step(element_type, window, y_scale) -> None:
    """Within one step at rare half steps; exact where y has x's scale and the window's
    size is odd (what fold-qdq folds: the average D / K is never near a half step)."""
    if not b.runs_vnni():
        pytest.skip("oneDNN's int8 code here has no VNNI or AMX (its kernels refuse it)")
    shape = (1, 24, 9, 11)
    x = _integers(element_type, shape, 6)
    ops = [avg_pool(element_type, window, typed, shape, y_scale) for typed in (False, True)]
    want, got = _both_ways(*ops, [x], "NHWC", "NHWC")
    assert np.abs(got.astype(int) - want.astype(int)).max() <= 1
    assert np.mean(got != want) < 0.05
    if y_scale == 0.08 and np.prod(window["kernel"]) % 2:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("element_type", [ui8, i8], ids=["u8", "s8"])
def test_average_pooling_pads_with_the_zero_point(element_type) -> None:
    """x = zero point + 40 everywhere, x's and y's parameters equal: a corner window of 3x3
    with pads counted averages 4 values of 40 and 5 of 0 (the padding, real 0), so it is
    zero point + round(160 / 9) = zero point + 18; padding holding the integer 0 would give
    another value (u8: 131 + 40 = 171 and 0 average to 76)."""
    if not b.runs_vnni():
        pytest.skip("oneDNN's int8 code here has no VNNI or AMX (its kernels refuse it)")
    zero = ZERO[element_type]
    params = nn.QParams.make(0.05, zero, element_type)
    window = WINDOWS["3x3-pads-counted"]
    ops = [
        nn.QAvgPool2dOp(
            create_ssa_value(_tensor(element_type, SHAPE, layout)), (params, params), **window
        )
        for layout in ("", "NHWC")
    ]
    _retype(ops[1], _tensor(element_type, SHAPE, "NHWC"))
    x = np.full(SHAPE, zero + 40, np.uint8 if element_type == ui8 else np.int8)
    want, got = _both_ways(ops[0], ops[1], [x], "NHWC", "NHWC")
    np.testing.assert_array_equal(got, want)
    assert (got[:, :, 0, 0] == zero + 18).all() and (got[:, :, 0, 1] == zero + 27).all()
    assert (got[:, :, 1:-1, 1:-1] == zero + 40).all()


def test_average_pooling_refusals_are_named() -> None:
    kernel = registry().lookup("qavg_pool2d_onednn")
    target = get_target("onednn")
    uncounted = avg_pool(ui8, {"kernel": (3, 3), "pads": (1, 1, 1, 1)})
    assert "pads that do not count" in kernel.accepts(uncounted, target, True)
    overhang = avg_pool(ui8, {"kernel": (2, 2), "strides": (2, 2), "ceil_mode": True})  # 7x9
    assert "ceil_mode windows past the padded end" in kernel.accepts(overhang, target, True)
    for op in (uncounted, overhang):
        chosen = registry().select(op, target, True)
        assert chosen is not None and chosen.kernel.name == "qavg_pool2d_ref", chosen


def test_what_the_kernels_refuse_is_named() -> None:
    kernel = registry().lookup("quantize_onednn")
    per_axis = nn.QuantizeOp(
        create_ssa_value(_tensor(f32, SHAPE)),
        nn.QParams.make(np.full(24, 0.02, np.float32), np.zeros(24, np.int64), ui8, axis=1),
    )
    assert "per-axis" in kernel.accepts(per_axis, get_target("onednn"), True)
    to_i32 = nn.DequantizeOp(
        create_ssa_value(_tensor(IntegerType(32), SHAPE)),
        nn.QParams.make(0.02, 0, IntegerType(32)),
    )
    assert "u8 or s8" in registry().lookup("dequantize_onednn").accepts(
        to_i32, get_target("onednn"), True
    )


def _program(element_type: str, zero: int) -> str:
    q = f"y_scale = dense<0.021> : tensor<f32>, y_zero_point = dense<{zero}> : tensor<{element_type}>"
    p = (
        f"x_scale = dense<0.021> : tensor<f32>, x_zero_point = dense<{zero}> : tensor<{element_type}>, "
        f"y_scale = dense<0.004> : tensor<f32>, y_zero_point = dense<{zero // 3}> : tensor<{element_type}>"
    )
    d = f"x_scale = dense<0.004> : tensor<f32>, x_zero_point = dense<{zero // 3}> : tensor<{element_type}>"
    return (
        "func.func @main(%x: tensor<1x20x6x5xf32>) -> (tensor<1x20x1x1xf32>, tensor<1x20x6x5xf32>) {\n"
        f"  %q = nn.quantize %x {{{q}}} : tensor<1x20x6x5xf32> -> tensor<1x20x6x5x{element_type}>\n"
        f"  %g = nn.qglobal_avg_pool %q {{{p}}} : tensor<1x20x6x5x{element_type}> -> "
        f"tensor<1x20x1x1x{element_type}>\n"
        f"  %d = nn.dequantize %g {{{d}}} : tensor<1x20x1x1x{element_type}> -> tensor<1x20x1x1xf32>\n"
        f"  %e = nn.dequantize %q {{{q.replace('y_', 'x_')}}} : tensor<1x20x6x5x{element_type}> -> "
        "tensor<1x20x6x5xf32>\n"
        "  func.return %d, %e : tensor<1x20x1x1xf32>, tensor<1x20x6x5xf32>\n}\n"
    )


@pytest.mark.parametrize(("element_type", "zero"), [("ui8", 117), ("i8", -9)])
def test_pipelines_give_the_interpreters_results_on_every_target(
    element_type, zero, tmp_path
) -> None:
    module = parse(_program(element_type, zero))
    x = np.random.default_rng(5).standard_normal((1, 20, 6, 5)).astype(np.float32) + 1.0
    want = Interpreter(module).run([x])
    for target in PIPELINE_TARGETS:
        for padding in (True, False):
            planned = compile_module(module, target, padding, DEFAULT_PIPELINE)
            generated = import_generated(
                translate(planned, tmp_path / f"{target}{padding}.py").code
            )
            for got in (Interpreter(planned).run([x]), generated.run(x)):
                # The pooled mean within one step (0.004) of the reference's; the rest exact.
                assert np.abs(got[0] - want[0]).max() <= 0.004 * 1.001
                np.testing.assert_array_equal(got[1], want[1])


# Large enough that a thread is still in the quantize's oneDNN call when another enters it:
# without `run`'s lock, 97 of 100 runs here gave another thread's results.
QUANTIZED_INPUT = """func.func @main(%x: tensor<1x32x64x64xf32>) -> tensor<1x32x64x64xf32> {
  %q = nn.quantize %x {y_scale = dense<0.021> : tensor<f32>, y_zero_point = dense<117> : tensor<ui8>} : tensor<1x32x64x64xf32> -> tensor<1x32x64x64xui8>
  %d = nn.dequantize %q {x_scale = dense<0.021> : tensor<f32>, x_zero_point = dense<117> : tensor<ui8>} : tensor<1x32x64x64xui8> -> tensor<1x32x64x64xf32>
  func.return %d : tensor<1x32x64x64xf32>
}
"""


def test_threads_running_one_generated_module_take_turns_through_the_quantize(
    tmp_path,
) -> None:
    """The input quantize keeps its oneDNN calls bound to one destination and points their
    source at each call's input (the short path): two threads in the kernel at once would
    quantize each other's input. The generated module's `run` lets one call in at a time,
    so threads running one loaded module, each on its own input, get that input's results."""
    planned = compile_module(parse(QUANTIZED_INPUT), "onednn", True, DEFAULT_PIPELINE)
    assert chosen_kernels(planned, nn.QuantizeOp) == {"quantize_onednn"}
    generated = import_generated(translate(planned, tmp_path / "threads.py").code)
    rng = np.random.default_rng(8)
    inputs = [rng.standard_normal((1, 32, 64, 64)).astype(np.float32) + k for k in range(4)]
    expected = [generated.run(x) for x in inputs]  # one thread at a time

    def check(k: int) -> None:
        for _ in range(25):
            for got, want in zip(generated.run(inputs[k]), expected[k], strict=True):
                np.testing.assert_array_equal(got, want)

    with ThreadPoolExecutor(len(inputs)) as pool:
        for future in [pool.submit(check, k) for k in range(len(inputs))]:
            future.result()


# ConvNeXt's channels-last MLP as torch's x86 quantizer leaves it: a product written plain,
# its bias add and GELU (element-wise: they keep their operand's layout), then the quantize
# the next product reads.
CHANNELS_LAST_MLP = """func.func @main(%x: tensor<1x6x6x16xf32>, %w: tensor<16x32xf32>,
    %b: tensor<32xf32>) -> tensor<1x6x6x32xf32> {
  %m = nn.matmul %x, %w : (tensor<1x6x6x16xf32>, tensor<16x32xf32>) -> tensor<1x6x6x32xf32>
  %a = nn.add %m, %b : (tensor<1x6x6x32xf32>, tensor<32xf32>) -> tensor<1x6x6x32xf32>
  %g = nn.gelu %a : tensor<1x6x6x32xf32>
  %q = nn.quantize %g {y_scale = dense<0.01> : tensor<f32>, y_zero_point = dense<20> : tensor<ui8>} : tensor<1x6x6x32xf32> -> tensor<1x6x6x32xui8>
  %d = nn.dequantize %q {x_scale = dense<0.01> : tensor<f32>, x_zero_point = dense<20> : tensor<ui8>} : tensor<1x6x6x32xui8> -> tensor<1x6x6x32xf32>
  %e = nn.exp %d : tensor<1x6x6x32xf32>
  func.return %e : tensor<1x6x6x32xf32>
}
"""


def test_quantize_of_plain_element_wise_results_stays_plain(tmp_path) -> None:
    """A rank-4 quantize whose input arrives plain through element-wise kernels (`"*"`: the
    bias add and GELU after a product) keeps it plain: no reorder to NHWC and back around
    it (each was a transpose of [1, 56, 56, 384] in ConvNeXt-T, a third of its run). The
    results are the interpreter's."""
    module = parse(CHANNELS_LAST_MLP)
    rng = np.random.default_rng(3)
    inputs = [
        rng.standard_normal((1, 6, 6, 16)).astype(np.float32),
        rng.standard_normal((16, 32)).astype(np.float32) * 0.3,
        rng.standard_normal(32).astype(np.float32) * 0.1,
    ]
    want = Interpreter(module).run(inputs)
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    assert chosen_kernels(planned, nn.QuantizeOp) == {"quantize_onednn"}
    quantize_op = next(op for op in planned.walk() if isinstance(op, nn.QuantizeOp))
    assert layout_of(quantize_op.output.type) is None  # plain
    reorders = [op.name for op in planned.walk() if op.name == "layout.reorder"]
    assert reorders == []
    generated = import_generated(translate(planned, tmp_path / "mlp.py").code)
    for got in (Interpreter(planned).run(inputs), generated.run(*inputs)):
        np.testing.assert_allclose(got[0], want[0], rtol=2e-2)


# An add of a plain value (a transpose whose result in NHWC would not be a view, so that it
# stays plain) and an NHWC one (an int8 convolution's dequantized result), quantized into
# another int8 convolution: the add runs in NHWC (propagate-layouts takes the layout of
# whichever operand comes reordered).
MIXED_ADD = """func.func @main(%y: tensor<1x6x16x6xf32>, %xq: tensor<1x16x6x6xui8>) -> tensor<1x16x6x6xui8> {
  %w = nn.constant dense<3> : tensor<16x16x1x1xi8>
  %c = nn.qconv2d %xq, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {w_scale = dense<0.01> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.02> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>, y_scale = dense<0.05> : tensor<f32>, y_zero_point = dense<120> : tensor<ui8>} : (tensor<1x16x6x6xui8>, tensor<16x16x1x1xi8>) -> tensor<1x16x6x6xui8>
  %d = nn.dequantize %c {x_scale = dense<0.05> : tensor<f32>, x_zero_point = dense<120> : tensor<ui8>} : tensor<1x16x6x6xui8> -> tensor<1x16x6x6xf32>
  %e = nn.exp %y : tensor<1x6x16x6xf32>
  %t = nn.transpose %e perm [0, 2, 1, 3] : tensor<1x6x16x6xf32> -> tensor<1x16x6x6xf32>
  %s = nn.add {operands} : (tensor<1x16x6x6xf32>, tensor<1x16x6x6xf32>) -> tensor<1x16x6x6xf32>
  %q = nn.quantize %s {y_scale = dense<0.05> : tensor<f32>, y_zero_point = dense<100> : tensor<ui8>} : tensor<1x16x6x6xf32> -> tensor<1x16x6x6xui8>
  %o = nn.qconv2d %q, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 {w_scale = dense<0.01> : tensor<f32>, w_zero_point = dense<0> : tensor<i8>, x_scale = dense<0.05> : tensor<f32>, x_zero_point = dense<100> : tensor<ui8>, y_scale = dense<0.05> : tensor<f32>, y_zero_point = dense<120> : tensor<ui8>} : (tensor<1x16x6x6xui8>, tensor<16x16x1x1xi8>) -> tensor<1x16x6x6xui8>
  func.return %o : tensor<1x16x6x6xui8>
}
"""


@pytest.mark.parametrize("operands", ["%t, %d", "%d, %t"])
def test_quantize_after_a_mixed_add_stays_nhwc_in_either_operand_order(operands: str) -> None:
    """An element-wise op that reads a plain and an NHWC value does not arrive plain,
    whichever operand is first: the quantize stays NHWC, and the only reorders are the
    program's input, the transposed value into NHWC and the result (found by a helper's
    review: following operand 0 alone made the order `%t, %d` add two reorders)."""
    planned = compile_module(
        parse(MIXED_ADD.replace("{operands}", operands)), "onednn", True, DEFAULT_PIPELINE
    )
    quantize_op = next(op for op in planned.walk() if isinstance(op, nn.QuantizeOp))
    assert layout_of(quantize_op.output.type) == NHWC
    assert sum(op.name == "layout.reorder" for op in planned.walk()) == 3
