"""oneDNN's nn.dynamic_quantize (kernels/onednn/dynamic_quantize.py) against the reference
kernel (bit-exact against ONNX's DynamicQuantizeLinear): the same bytes, u8 and s8, exact half
steps and saturation included, called and bound; the bound call reads the scale and zero
point anew on every run; a NaN or an infinity in x, or a scale that is not finite, runs the
reference."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32, i8
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn.dynamic_quantize import scaled_by_own_range
from nnlayout.kernels.providers import registry
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.reference_integer import dynamic_qparams
from nnlayout.kernels.targets import get_target

pytestmark = [
    pytest.mark.onednn,
    pytest.mark.skipif(not b.available(), reason="oneDNN is not available here"),
]
SHAPE = (5, 3, 77)  # 1,155 elements: not a multiple of oneDNN's vector length


def _op(element_type: object) -> nn.DynamicQuantizeOp:
    return nn.DynamicQuantizeOp(
        create_ssa_value(TensorType(f32, SHAPE)),
        create_ssa_value(TensorType(f32, ())),
        create_ssa_value(TensorType(element_type, ())),
    )


def _inputs(element_type: object, seed: int) -> list[np.ndarray]:
    """x with exact half steps and values beyond the range, its DynamicQuantizeLinear scale
    and zero point (for s8, that zero point moved into s8's range)."""
    x = np.random.default_rng(seed).standard_normal(SHAPE).astype(np.float32) * (2 + seed)
    scale, zero_point = dynamic_qparams(x)
    x.flat[:60] = (np.arange(60, dtype=np.float32) - 30.5) * scale  # half steps
    x.flat[60:62] = (1e4, -1e4)  # saturated either way
    signed = element_type == i8
    point = np.array(
        int(zero_point) - 128 if signed else zero_point, np.int8 if signed else np.uint8
    )
    return [x, np.array(scale, np.float32), point]


@pytest.mark.parametrize("element_type", [nn.ui8, i8], ids=["u8", "s8"])
def test_dynamic_quantize_is_the_reference(element_type) -> None:
    op = _op(element_type)
    chosen = registry().select(op, get_target("onednn"), True)
    assert chosen is not None and chosen.kernel.name == "dynamic_quantize_onednn", chosen
    kernel = registry().lookup("dynamic_quantize_onednn")
    inputs = _inputs(element_type, 0)
    out = np.empty(SHAPE, np.uint8 if element_type == nn.ui8 else np.int8)
    run = kernel.prepare(op, None).on(inputs, out)
    for seed in range(3):  # new values, scale and zero point in the same arrays each run
        for array, new in zip(inputs, _inputs(element_type, seed), strict=True):
            array[...] = new
        want = REFERENCE_KERNELS[nn.DynamicQuantizeOp](op, inputs)
        run()
        np.testing.assert_array_equal(out, want)
        np.testing.assert_array_equal(kernel.impl(op, inputs), want)
    info = np.iinfo(out.dtype)
    assert out.min() == info.min and out.max() == info.max


@pytest.mark.parametrize("bad", ["nan", "inf", "scale", "zero-scale"])
def test_what_is_not_finite_runs_the_reference(bad: str) -> None:
    """oneDNN converts NaN to 0; the reference (ONNX) writes the zero point there (a scale
    of 0, x's range underflowing f32, makes 0 / 0 a NaN)."""
    op, inputs = _op(nn.ui8), _inputs(nn.ui8, 1)
    out = np.empty(SHAPE, np.uint8)
    run = registry().lookup("dynamic_quantize_onednn").prepare(op, None).on(inputs, out)
    if bad == "scale":
        inputs[1][...] = np.inf
    elif bad == "zero-scale":  # DynamicQuantizeLinear's of x = [-1e-44, 0, ...]: 0 / 0 is NaN
        inputs[1][...] = 0.0
    else:
        inputs[0][2, 1, 7] = np.nan if bad == "nan" else np.inf
    want = REFERENCE_KERNELS[nn.DynamicQuantizeOp](op, inputs)
    run()
    np.testing.assert_array_equal(out, want)
    if bad == "nan":
        assert out[2, 1, 7] == inputs[2]


def _own_range_ops() -> tuple[nn.DynamicScaleOp, nn.DynamicZeroPointOp, nn.DynamicQuantizeOp]:
    """DynamicQuantizeLinear as the importer writes it: the scale and zero point of x's own
    range, then x quantized with them."""
    x = create_ssa_value(TensorType(f32, SHAPE))
    scale, zero_point = nn.DynamicScaleOp(x), nn.DynamicZeroPointOp(x)
    return scale, zero_point, nn.DynamicQuantizeOp(x, scale.output, zero_point.output)


def test_a_scale_of_the_quantized_values_own_range_is_recognised() -> None:
    _, _, op = _own_range_ops()
    assert scaled_by_own_range(op)
    other = nn.DynamicScaleOp(create_ssa_value(TensorType(f32, SHAPE)))
    assert not scaled_by_own_range(nn.DynamicQuantizeOp(op.input, other.output, op.zero_point))
    assert not scaled_by_own_range(_op(nn.ui8))  # a scale from elsewhere
    ranged = nn.DynamicScaleOp(nn.DynamicRangeOp(op.input).output)  # share-dynamic-range's
    assert scaled_by_own_range(nn.DynamicQuantizeOp(op.input, ranged.output, op.zero_point))
    elsewhere = nn.DynamicScaleOp(nn.DynamicRangeOp(other.input).output)
    assert not scaled_by_own_range(nn.DynamicQuantizeOp(op.input, elsewhere.output, op.zero_point))


@pytest.mark.parametrize("bad", ["none", "nan", "inf"])
def test_with_its_own_ranges_scale_x_is_not_read_twice(monkeypatch, bad: str) -> None:  # type: ignore[no-untyped-def]
    """The scale of x's own range is NaN or infinite wherever x holds a NaN or an infinity,
    so the kernel leaves out the x . x pass (`all_finite`) and still runs the reference on
    such an x; with a scale from elsewhere it makes that pass."""
    from nnlayout.kernels.onednn import dynamic_quantize

    scale_op, zero_point_op, op = _own_range_ops()
    x = _inputs(nn.ui8, 2)[0]
    if bad != "none":
        x[1, 2, 3] = np.nan if bad == "nan" else -np.inf
    with np.errstate(invalid="ignore"):  # the zero point of a range that is not finite
        inputs = [x, *(REFERENCE_KERNELS[type(o)](o, [x]) for o in (scale_op, zero_point_op))]
    passes: list[int] = []
    real = dynamic_quantize.all_finite
    monkeypatch.setattr(dynamic_quantize, "all_finite", lambda a: passes.append(1) or real(a))
    out = np.empty(SHAPE, np.uint8)
    registry().lookup("dynamic_quantize_onednn").prepare(op, None).on(inputs, out)()
    np.testing.assert_array_equal(out, REFERENCE_KERNELS[nn.DynamicQuantizeOp](op, inputs))
    assert passes == []
    if bad == "none":
        elsewhere = _op(nn.ui8)
        registry().lookup("dynamic_quantize_onednn").prepare(elsewhere, None).on(inputs, out)()
        assert passes == [1]
