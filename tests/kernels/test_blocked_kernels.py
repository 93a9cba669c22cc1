"""The blocked kernels against the reference kernels: pack -> blocked kernel -> unpack must give
the reference result, padding lanes must be exactly zero afterwards (even when real lanes hold
NaN or Inf, and for ops with f(0) != 0), and every `accepts` reason must be reachable.
Element-wise, batch norm, pooling and concat here; the convolutions in
test_blocked_convolutions.py, which shares `run`, `check`, `random` and `poison`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.dialects.layout import LayoutSpec
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels import blocked
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.registry import Target
from nnlayout.tests.helpers import (
    AVX2,
    BLOCKS,
    KERNELS,
    NARY_CASES,
    TEST_TARGETS,
    UNARY_CASES,
    avg_pool,
    batch_norm,
    build_in_layouts,
    build_plain,
    concat,
    depthwise,
    max_pool,
)

CHANNELS = (1, 3, 5, 8, 17, 33)


def run(
    name: str,
    target: Target,
    build: Callable[..., Operation],
    arrays: Sequence[np.ndarray],
    any_layout: str = "",
    **kwargs: Any,
) -> tuple[Operation, np.ndarray, str]:
    """Runs kernel `name` on `arrays` in its layouts (`build_in_layouts`); returns the op,
    the physical result and the result's layout."""
    op, packed, result_layout = build_in_layouts(name, target, build, arrays, any_layout, **kwargs)
    with np.errstate(all="ignore"):
        out = KERNELS[name].impl(op, packed)
    return op, out, result_layout


def check(
    op: Operation, out: np.ndarray, layout: str, arrays: Sequence[np.ndarray], exact: bool = False
) -> None:
    """`out` (physical, in `layout`) is the reference result with zero padding lanes."""
    shape = shape_of(op.results[0])
    assert out.dtype == np.float32
    spec = LayoutSpec.parse(layout) if layout else None
    if spec is not None:
        assert out.shape == spec.physical_shape(shape)
        padding = out[spec.padding_mask(shape)]
        assert np.all(padding == 0), f"padding lanes hold {padding[padding != 0][:8]}"
        out = spec.unpack(out, shape)
    with np.errstate(all="ignore"):
        expected = REFERENCE_KERNELS[type(op)](op, arrays)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(expected))
    if exact:
        np.testing.assert_array_equal(out, expected)
    else:
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def random(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def poison(rng: np.random.Generator, array: np.ndarray) -> np.ndarray:
    """`array` with a few NaN and +-Inf entries."""
    array = array.copy()
    flat = array.reshape(-1)
    spots = rng.choice(flat.size, size=min(3, flat.size), replace=False)
    flat[spots] = [np.nan, np.inf, -np.inf][: len(spots)]
    return array


# ------------------------------------------------------------------- element-wise
ANY_LAYOUTS = ("NCHW8c", "NCHW16c", "NHWC", "NCHW4c2h", "")


@pytest.mark.parametrize("layout", ANY_LAYOUTS)
@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("case", UNARY_CASES)
def test_unary_any(case: str, channels: int, layout: str) -> None:
    rng = np.random.default_rng(channels)
    x = poison(rng, random(rng, 2, channels, 3, 5))
    name = (
        case.removesuffix("_min_positive").removesuffix("_max_negative").removesuffix("_unbounded")
        + "_any"
    )
    op, out, result_layout = run(name, AVX2, UNARY_CASES[case], [x], any_layout=layout)
    check(op, out, result_layout, [x], exact=True)


@pytest.mark.parametrize("layout", ANY_LAYOUTS)
@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("case", NARY_CASES)
def test_nary_any(case: str, channels: int, layout: str) -> None:
    rng = np.random.default_rng(channels)
    operands = 3 if case == "sum" else 2
    arrays = [poison(rng, random(rng, 1, channels, 4, 3)) for _ in range(operands)]
    arrays[1].reshape(-1)[::4] = 0  # 0 / 0 and x / 0 in real lanes too
    op, out, result_layout = run(f"{case}_any", AVX2, NARY_CASES[case], arrays, any_layout=layout)
    check(op, out, result_layout, arrays, exact=True)


@pytest.mark.parametrize("in_place", [True, False])
@pytest.mark.parametrize("case", [*UNARY_CASES, *NARY_CASES])
def test_elementwise_any_on_strided_views(case: str, in_place: bool) -> None:
    """Element-wise kernels write into a halo's interior (every 4th float32 of a row, 16
    bytes apart), in place or from operands strided alike, as the reference computes;
    numpy's own np.negative got this wrong (`_negative_into`)."""
    rng = np.random.default_rng(4)
    build = UNARY_CASES.get(case) or NARY_CASES[case]
    operands = 1 if case in UNARY_CASES else 3 if case == "sum" else 2
    buffers = [poison(rng, random(rng, 2, 8, 5, 4)) for _ in range(operands)]
    views = [buffer[..., 1:2] for buffer in buffers]
    logical = [np.ascontiguousarray(view) for view in views]
    op = build(*(create_ssa_value(TensorType(f32, view.shape)) for view in views))
    out = views[0] if in_place else np.zeros((2, 8, 5, 4), np.float32)[..., 1:2]
    with np.errstate(all="ignore"):
        expected = REFERENCE_KERNELS[type(op)](op, logical)
        blocked.prepare_elementwise(op, None)(views, out)
    np.testing.assert_array_equal(out, expected)


def test_any_layout_kernels_work_in_place_on_any_dense_layout() -> None:
    assert all(KERNELS[f"{n}_any"].in_place == 0 for n in ("relu", "add", "sum"))
    assert KERNELS["relu_any"].accepts_layout is not None
    assert (
        KERNELS["relu_any"].accepts_layout(
            build_plain(nn.ReluOp, [np.zeros((2, 3))]), LayoutSpec.parse("NC4c")
        )
        is None
    )


@pytest.mark.parametrize(
    ("shapes", "reason"),
    [
        ([(1, 8, 4, 4), (1, 8, 1, 1)], None),
        ([(1, 8, 1, 1), (1, 8, 4, 4)], None),
        ([(1, 8, 4, 4), (1, 8, 4, 4)], None),
        (
            [(8, 1, 1), (1, 8, 4, 4)],
            "broadcasting operand 0 [8, 1, 1] to [1, 8, 4, 4] (the kernel "
            "broadcasts axes of size 1 of an operand of the same rank; extend-ranks gives a "
            "shorter operand the result's rank)",
        ),
    ],
)
def test_binary_any_broadcasts_axes_of_size_1(
    shapes: list[tuple[int, ...]], reason: str | None
) -> None:
    op = build_plain(nn.AddOp, [np.zeros(s) for s in shapes])
    assert KERNELS["add_any"].accepts(op, AVX2, True) == reason
    summed = build_plain(lambda *xs: nn.SumOp(xs), [np.zeros(s) for s in shapes])
    assert KERNELS["sum_any"].accepts(summed, AVX2, True) == reason


@pytest.mark.parametrize("layout", ANY_LAYOUTS)
@pytest.mark.parametrize("case", NARY_CASES)
@pytest.mark.parametrize("small", [(2, 12, 1, 1), (1, 12, 4, 1), (1, 1, 4, 3), (2, 1, 1, 1)])
@pytest.mark.parametrize("first", [True, False])
def test_nary_any_broadcasting(case: str, layout: str, small: tuple[int, ...], first: bool) -> None:
    """An operand with axes of size 1 broadcasts in the physical layout where that layout
    does not block those axes; where it does (C in NCHW8c), the kernel refuses the layout,
    so propagate-layouts keeps the op plain."""
    rng = np.random.default_rng(len(small) + first)
    arrays = [poison(rng, random(rng, 2, 12, 4, 3)), random(rng, *small)]
    if case == "sum":
        arrays.append(random(rng, 2, 12, 4, 3))
    if first:
        arrays[:2] = arrays[1::-1]
    kernel = KERNELS[f"{case}_any"]
    if case == "prelu" and first:  # the slope broadcasts to the input, never the other way
        with pytest.raises(VerifyException, match="PRelu broadcasts the slope only"):
            build_plain(NARY_CASES[case], arrays)
        return
    op = build_plain(NARY_CASES[case], arrays)
    assert kernel.accepts(op, AVX2, True) is None
    spec = LayoutSpec.parse(layout) if layout else None
    refusal = None if spec is None else kernel.accepts_layout(op, spec)
    blocked_axes = (
        []
        if spec is None
        else [
            axis
            for axis, size, full in zip("NCHW", small, (2, 12, 4, 3), strict=True)
            if size != full and spec.blocks_of(axis)
        ]
    )
    if blocked_axes:
        assert refusal == (
            f"operand {0 if first else 1} {list(small)} broadcasts along "
            f"axis {blocked_axes[0]}, which layout '{layout}' blocks"
        )
        return
    assert refusal is None
    op, out, result_layout = run(f"{case}_any", AVX2, NARY_CASES[case], arrays, any_layout=layout)
    check(op, out, result_layout, arrays, exact=True)


# --------------------------------------------------------------------- batch norm
@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("epsilon", [1e-5, 0.0])
def test_batch_norm(block: int, channels: int, epsilon: float) -> None:
    """With epsilon = 0 the padded lanes' factor is 0 / 0: the kernel must still give 0."""
    rng = np.random.default_rng(channels)
    var = np.abs(random(rng, channels)) + 0.1
    arrays = [
        poison(rng, random(rng, 2, channels, 3, 4)),
        random(rng, channels),
        random(rng, channels),
        random(rng, channels),
        var,
    ]
    op, out, layout = run(
        "batch_norm_nchwc", TEST_TARGETS[block], batch_norm, arrays, epsilon=epsilon
    )
    check(op, out, layout, arrays)


def test_batch_norm_refusals() -> None:
    kernel = KERNELS["batch_norm_nchwc"]
    vectors = [np.zeros(3)] * 4
    flat = build_plain(batch_norm, [np.zeros((2, 3)), *vectors])
    assert kernel.accepts(flat, AVX2, True) == "rank-2 input; the blocked kernel needs NCHW"
    image = build_plain(batch_norm, [np.zeros((1, 3, 4, 4)), *vectors])
    assert kernel.accepts(image, AVX2, False) == (
        "3 input channels are not a multiple of the block 8 and padding is off"
    )
    assert kernel.accepts(image, AVX2, True) is None
    assert kernel.in_place == 0


# ------------------------------------------------------------------------ pooling
POOL_LAYOUTS = ("NCHW8c", "NCHW16c", "NHWC", "NWHC8c", "NCHW", "")


@pytest.mark.parametrize("kernel", ["dwconv2d_nchwc", "avg_pool2d_any"])
def test_sums_of_negative_zeros_are_positive_zero(kernel: str) -> None:
    """Sums start from +0, as the reference's matmul and numpy's sum do: taps folded from the
    first one kept -0 where every term was -0."""
    x = np.full((1, 8, 5, 5), -0.0, np.float32)
    if kernel == "dwconv2d_nchwc":
        arrays = [x, np.ones((8, 1, 3, 3), np.float32)]
        op, out, layout = run(kernel, AVX2, depthwise, arrays)
    else:
        arrays = [x]
        op, out, layout = run(
            kernel, AVX2, avg_pool, arrays, any_layout="NCHW8c", kernel=(2, 2), strides=(1, 1)
        )
    expected = REFERENCE_KERNELS[type(op)](op, arrays)
    assert not np.signbit(expected).any()
    assert not np.signbit(LayoutSpec.parse(layout).unpack(out, shape_of(op.results[0]))).any()


@settings(max_examples=40, deadline=None)
@given(
    layout=st.sampled_from(POOL_LAYOUTS),
    channels=st.sampled_from(CHANNELS),
    size=st.tuples(st.integers(2, 8), st.integers(2, 8)),
    kernel=st.tuples(*[st.integers(1, 3)] * 2),
    strides=st.tuples(*[st.integers(1, 3)] * 2),
    dilations=st.tuples(*[st.integers(1, 2)] * 2),
    pads=st.tuples(*[st.integers(0, 2)] * 4),
    ceil_mode=st.booleans(),
    count_include_pad=st.booleans(),
    average=st.booleans(),
)
def test_pooling(
    layout: str,
    channels: int,
    size: tuple[int, int],
    kernel: tuple[int, int],
    strides: tuple[int, int],
    dilations: tuple[int, int],
    pads: tuple[int, ...],
    ceil_mode: bool,
    count_include_pad: bool,
    average: bool,
) -> None:
    # Pads stay below the dilated window extent; windows larger than the input are valid
    # only with ceil_mode (a partial first window).
    pads = tuple(
        min(p, (k - 1) * d) for p, k, d in zip(pads, kernel * 2, dilations * 2, strict=True)
    )
    try:
        nn.pool2d_shape(
            "nn.max_pool2d", (2, channels, *size), kernel, strides, pads, dilations, ceil_mode
        )
    except VerifyException:
        reject()
    rng = np.random.default_rng(channels)
    x = poison(rng, random(rng, 2, channels, *size))
    kwargs: dict[str, Any] = {
        "kernel": kernel,
        "strides": strides,
        "pads": pads,
        "dilations": dilations,
        "ceil_mode": ceil_mode,
    }
    if average:
        op, out, result = run(
            "avg_pool2d_any",
            AVX2,
            avg_pool,
            [x],
            any_layout=layout,
            count_include_pad=count_include_pad,
            **kwargs,
        )
    else:
        op, out, result = run("max_pool2d_any", AVX2, max_pool, [x], any_layout=layout, **kwargs)
    check(op, out, result, [x])


@pytest.mark.parametrize("layout", POOL_LAYOUTS)
@pytest.mark.parametrize("ceil_mode", [False, True])
@pytest.mark.parametrize("count_include_pad", [False, True])
def test_avg_pool_divisors(layout: str, ceil_mode: bool, count_include_pad: bool) -> None:
    """Uneven pads and ceil_mode overhang give every border window its own divisor."""
    rng = np.random.default_rng(3)
    x = random(rng, 1, 5, 7, 6)
    op, out, result = run(
        "avg_pool2d_any",
        AVX2,
        avg_pool,
        [x],
        any_layout=layout,
        kernel=(3, 2),
        strides=(2, 2),
        pads=(1, 0, 2, 1),
        ceil_mode=ceil_mode,
        count_include_pad=count_include_pad,
    )
    check(op, out, result, [x])


@pytest.mark.parametrize("layout", POOL_LAYOUTS)
@pytest.mark.parametrize("count_include_pad", [False, True])
def test_pool_partial_first_window(layout: str, count_include_pad: bool) -> None:
    """ceil_mode keeps a first window larger than the input (kernel 3 over 2 rows): its
    overhang never counts in an average, nor wins a max."""
    rng = np.random.default_rng(5)
    x = poison(rng, random(rng, 1, 3, 2, 5))
    kwargs: dict[str, Any] = {"kernel": (3, 2), "strides": (2, 2), "ceil_mode": True}
    op, out, result = run(
        "avg_pool2d_any",
        AVX2,
        avg_pool,
        [x],
        any_layout=layout,
        count_include_pad=count_include_pad,
        **kwargs,
    )
    assert shape_of(op.output) == (1, 3, 1, 3)
    check(op, out, result, [x])
    op, out, result = run("max_pool2d_any", AVX2, max_pool, [x], any_layout=layout, **kwargs)
    check(op, out, result, [x], exact=True)


@pytest.mark.parametrize("layout", POOL_LAYOUTS)
def test_max_pool_padding_never_wins(layout: str) -> None:
    """All-negative input: border windows see -inf padding, never 0."""
    rng = np.random.default_rng(0)
    x = -np.abs(random(rng, 1, 5, 4, 4)) - 1
    op, out, result = run(
        "max_pool2d_any",
        AVX2,
        max_pool,
        [x],
        any_layout=layout,
        kernel=(3, 3),
        pads=(1, 1, 1, 1),
        strides=(2, 2),
        ceil_mode=True,
    )
    check(op, out, result, [x], exact=True)
    spec = LayoutSpec.parse(result) if result else None
    real = spec.unpack(out, shape_of(op.output)) if spec else out
    assert np.all(real <= -1)


def test_max_pool_window_of_pure_padding() -> None:
    """A dilated window can see only padding: -inf on real lanes as in the reference, and
    still 0 on padding lanes."""
    x = np.ones((1, 3, 1, 1), np.float32)
    op, out, result = run(
        "max_pool2d_any",
        AVX2,
        max_pool,
        [x],
        any_layout="NCHW8c",
        kernel=(2, 1),
        dilations=(3, 1),
        pads=(2, 0, 2, 0),
    )
    check(op, out, result, [x], exact=True)
    assert np.isneginf(LayoutSpec.parse(result).unpack(out, shape_of(op.output))).any()


@pytest.mark.parametrize("layout", POOL_LAYOUTS)
@pytest.mark.parametrize("channels", CHANNELS)
def test_global_avg_pool(layout: str, channels: int) -> None:
    rng = np.random.default_rng(channels)
    x = poison(rng, random(rng, 2, channels, 5, 3))
    op, out, result = run("global_avg_pool_any", AVX2, nn.GlobalAvgPoolOp, [x], any_layout=layout)
    check(op, out, result, [x])


@pytest.mark.parametrize(
    ("layout", "reason"),
    [
        ("NCHW8c", None),
        ("NHWC", None),
        ("NHWC16c", None),
        ("NCHW4h", "layout 'NCHW4h' blocks axis H; pooling needs whole N, H and W"),
        ("NCHW2n", "layout 'NCHW2n' blocks axis N; pooling needs whole N, H and W"),
        ("NCH", "layout 'NCH' is not a layout of N, C, H and W"),
    ],
)
def test_pool_layouts(layout: str, reason: str | None) -> None:
    op = build_plain(max_pool, [np.zeros((1, 3, 4, 4))], kernel=(2, 2))
    for name in ("max_pool2d_any", "avg_pool2d_any", "global_avg_pool_any"):
        accepts_layout = KERNELS[name].accepts_layout
        assert accepts_layout is not None
        assert accepts_layout(op, LayoutSpec.parse(layout)) == reason


def test_global_avg_pool_needs_rank_4() -> None:
    op = build_plain(nn.GlobalAvgPoolOp, [np.zeros((1, 3, 4))])
    assert KERNELS["global_avg_pool_any"].accepts(op, AVX2, True) == (
        "rank-3 input; the kernel needs N, C, H, W"
    )
    image = build_plain(nn.GlobalAvgPoolOp, [np.zeros((1, 3, 4, 4))])
    assert KERNELS["global_avg_pool_any"].accepts(image, AVX2, True) is None


# ------------------------------------------------------------------------- concat
@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("axis", [1, -3])
def test_concat(block: int, axis: int) -> None:
    rng = np.random.default_rng(block)
    arrays = [poison(rng, random(rng, 2, c, 3, 4)) for c in (block, 2 * block, block)]
    op = build_plain(concat, arrays, axis=axis)
    assert KERNELS["concat_nchwc"].accepts(op, TEST_TARGETS[block], False) is None
    op, out, layout = run("concat_nchwc", TEST_TARGETS[block], concat, arrays, axis=axis)
    check(op, out, layout, arrays, exact=True)


@pytest.mark.parametrize(
    ("shapes", "axis", "reason"),
    [
        ([(1, 8, 2, 2), (1, 3, 2, 2)], 1, "input 1 has 3 channels, not a multiple of the block 8"),
        ([(1, 8, 2, 2), (1, 8, 3, 2)], 2, "concatenation along axis 2, not the channel axis 1"),
        ([(2, 8), (2, 8)], 1, "rank-2 tensors; the blocked kernel needs NCHW"),
    ],
)
def test_concat_refusals(shapes: list[tuple[int, ...]], axis: int, reason: str) -> None:
    op = build_plain(concat, [np.zeros(s) for s in shapes], axis=axis)
    assert KERNELS["concat_nchwc"].accepts(op, AVX2, True) == reason
