"""The blocked kernels against the reference kernels: pack -> blocked kernel -> unpack must give
the reference result, padding lanes must be exactly zero afterwards (even when real lanes hold
NaN or Inf, and for ops with f(0) != 0), and every `accepts` reason must be reachable."""

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
from nnlayout.kernels.blocked import BlockedOptions
from nnlayout.kernels.providers import registry
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.registry import Target
from nnlayout.tests.helpers import (
    AVX2,
    AVX512,
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
    conv,
    depthwise,
    max_pool,
    tensor,
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


# ------------------------------------------------------------------- convolutions
@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("c_in", CHANNELS)
def test_conv2d_channels(block: int, c_in: int) -> None:
    rng = np.random.default_rng(c_in)
    c_out = CHANNELS[(CHANNELS.index(c_in) + 2) % len(CHANNELS)]
    arrays = [random(rng, 2, c_in, 7, 6), random(rng, c_out, c_in, 3, 3), random(rng, c_out)]
    op, out, layout = run("conv2d_nchwc", TEST_TARGETS[block], conv, arrays, pads=(1, 0, 1, 2))
    check(op, out, layout, arrays)


@settings(max_examples=30, deadline=None)
@given(
    block=st.sampled_from((4, *BLOCKS)),
    c_in=st.sampled_from(CHANNELS),
    c_out=st.sampled_from(CHANNELS),
    kernel=st.tuples(*[st.integers(1, 3)] * 2),
    strides=st.tuples(*[st.integers(1, 3)] * 2),
    dilations=st.tuples(*[st.integers(1, 2)] * 2),
    pads=st.tuples(*[st.integers(0, 2)] * 4),
    bias=st.booleans(),
    seed=st.integers(0, 99),
)
def test_conv2d_geometry(
    block: int,
    c_in: int,
    c_out: int,
    kernel: tuple[int, int],
    strides: tuple[int, int],
    dilations: tuple[int, int],
    pads: tuple[int, ...],
    bias: bool,
    seed: int,
) -> None:
    rng = np.random.default_rng(seed)
    arrays = [random(rng, 1, c_in, 7, 8), random(rng, c_out, c_in, *kernel)]
    if bias:
        arrays.append(random(rng, c_out))
    op, out, layout = run(
        "conv2d_nchwc",
        TEST_TARGETS[block],
        conv,
        arrays,
        strides=strides,
        pads=pads,
        dilations=dilations,
    )
    check(op, out, layout, arrays)


@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("c_in", [3, 5])  # a plain input (an image), a blocked one
def test_conv2d_nan_and_inf(block: int, c_in: int) -> None:
    """0 * Inf in padded output channels would be NaN: the kernel re-zeroes them; NaN reaches
    the same outputs as in the reference."""
    rng = np.random.default_rng(1)
    arrays = [poison(rng, random(rng, 1, c_in, 6, 6)), random(rng, 3, c_in, 3, 3), random(rng, 3)]
    op, out, layout = run("conv2d_nchwc", TEST_TARGETS[block], conv, arrays, pads=(1, 1, 1, 1))
    check(op, out, layout, arrays)


@settings(max_examples=30, deadline=None)
@given(
    block=st.sampled_from((4, *BLOCKS)),
    groups=st.integers(2, 4),
    blocks=st.tuples(st.integers(1, 2), st.integers(1, 2)),
    kernel=st.tuples(*[st.integers(1, 3)] * 2),
    strides=st.tuples(*[st.integers(1, 2)] * 2),
    dilations=st.tuples(*[st.integers(1, 2)] * 2),
    pads=st.tuples(*[st.integers(0, 2)] * 4),
    bias=st.booleans(),
    seed=st.integers(0, 99),
)
def test_grouped_conv2d(
    block: int,
    groups: int,
    blocks: tuple[int, int],
    kernel: tuple[int, int],
    strides: tuple[int, int],
    dilations: tuple[int, int],
    pads: tuple[int, ...],
    bias: bool,
    seed: int,
) -> None:
    """Groups of whole blocks of input and output channels: one GEMM per group, each group's
    channels read and written nowhere else; NaN and Inf reach the outputs they reach in the
    reference."""
    rng = np.random.default_rng(seed)
    c_in, c_out = (groups * count * block for count in blocks)
    arrays = [poison(rng, random(rng, 2, c_in, 7, 6)), random(rng, c_out, c_in // groups, *kernel)]
    if bias:
        arrays.append(random(rng, c_out))
    target = TEST_TARGETS[block]
    assert (
        KERNELS["conv2d_nchwc"].accepts(build_plain(conv, arrays, groups=groups), target, False)
        is None
    )
    op, out, layout = run(
        "conv2d_nchwc",
        target,
        conv,
        arrays,
        strides=strides,
        pads=pads,
        dilations=dilations,
        groups=groups,
    )
    check(op, out, layout, arrays)


@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("channels", CHANNELS)
def test_dwconv2d_channels(block: int, channels: int) -> None:
    rng = np.random.default_rng(channels)
    arrays = [
        poison(rng, random(rng, 2, channels, 7, 6)),
        random(rng, channels, 1, 3, 3),
        random(rng, channels),
    ]
    op, out, layout = run(
        "dwconv2d_nchwc", TEST_TARGETS[block], depthwise, arrays, pads=(1, 1, 0, 2)
    )
    check(op, out, layout, arrays)


@settings(max_examples=20, deadline=None)
@given(
    block=st.sampled_from(BLOCKS),
    channels=st.sampled_from(CHANNELS),
    kernel=st.tuples(*[st.integers(1, 3)] * 2),
    strides=st.tuples(*[st.integers(1, 3)] * 2),
    dilations=st.tuples(*[st.integers(1, 2)] * 2),
    pads=st.tuples(*[st.integers(0, 2)] * 4),
    bias=st.booleans(),
)
def test_dwconv2d_geometry(
    block: int,
    channels: int,
    kernel: tuple[int, int],
    strides: tuple[int, int],
    dilations: tuple[int, int],
    pads: tuple[int, ...],
    bias: bool,
) -> None:
    rng = np.random.default_rng(channels)
    arrays = [random(rng, 1, channels, 8, 7), random(rng, channels, 1, *kernel)]
    if bias:
        arrays.append(random(rng, channels))
    op, out, layout = run(
        "dwconv2d_nchwc",
        TEST_TARGETS[block],
        depthwise,
        arrays,
        strides=strides,
        pads=pads,
        dilations=dilations,
    )
    check(op, out, layout, arrays)


@pytest.mark.parametrize(
    ("target", "c_in", "expected"),
    [
        (AVX512, 12, ("NCHW16c", "IHW16iO16o", "C16c")),
        (AVX2, 5, ("NCHW8c", "IHW8iO8o", "C8c")),
        # An image whose channels padding would at least double: the input stays plain.
        (AVX512, 4, ("", "IHWO16o", "C16c")),
        (AVX2, 3, ("", "IHWO8o", "C8c")),
        # Padding would double 8 channels too, but 8 are more than an image has: the layer
        # stays blocked, as its producer usually writes blocks.
        (AVX512, 8, ("NCHW16c", "IHW16iO16o", "C16c")),
    ],
)
def test_conv_layouts_follow_the_target(
    target: Target, c_in: int, expected: tuple[str, ...]
) -> None:
    op = build_plain(conv, [np.zeros((1, c_in, 8, 8)), np.zeros((4, c_in, 3, 3)), np.zeros(4)])
    assert KERNELS["conv2d_nchwc"].operand_and_result_layouts(op, target) == (
        expected,
        (BlockedOptions.of(target).activation_layout,),
    )
    dw = build_plain(depthwise, [np.zeros((1, 3, 8, 8)), np.zeros((3, 1, 3, 3))])
    assert KERNELS["dwconv2d_nchwc"].operand_and_result_layouts(dw, AVX2) == (
        ("NCHW8c", "OIHW8o"),
        ("NCHW8c",),
    )


@pytest.mark.parametrize(
    ("c_in", "layouts", "wrong"),
    [
        (16, ("NCHW8c", "IHW8iO8o", "C8c", "NCHW8c"), None),
        (3, ("", "IHWO8o", "C8c", "NCHW8c"), None),
        (16, ("NCHW8c", "OIHW8i8o", "C8c", "NCHW8c"), "weights in layout 'OIHW8i8o', not IHW8iO8o"),
        (3, ("", "IHW8iO8o", "C8c", "NCHW8c"), "weights in layout 'IHW8iO8o', not IHWO8o"),
        (16, ("NCHW8c", "IHW8iO8o", "", "NCHW8c"), "bias in layout 'plain', not C8c"),
        (16, ("NCHW8c", "IHW8iO8o", "C8c", ""), "result of type"),
    ],
)
def test_conv_checks_the_layouts_its_types_carry(
    c_in: int, layouts: tuple[str, ...], wrong: str | None
) -> None:
    """What it is run on as typed, as an older nnlayout's IR or a hand-written one may type
    it: OIHW8i8o weights (what it read before) ran, misread as its GEMM's matrix."""
    x, w, b = (
        create_ssa_value(tensor(s, layout))
        for s, layout in zip([(1, c_in, 8, 8), (16, c_in, 3, 3), (16,)], layouts, strict=False)
    )
    plain = conv(x, w, b, pads=(1, 1, 1, 1))
    op = nn.Conv2dOp.create(
        operands=[x, w, b],
        properties=dict(plain.properties),
        result_types=[tensor((1, 16, 8, 8), layouts[3])],
    )
    reason = KERNELS["conv2d_nchwc"].accepts_types(op)  # type: ignore[misc]
    assert (reason is None) if wrong is None else (wrong in reason)  # type: ignore[operator]


def test_blocked_kernel_needs_blocked_operands() -> None:
    rng = np.random.default_rng(0)
    arrays = [random(rng, 1, 3, 5, 5), random(rng, 4, 3, 3, 3)]
    op = build_plain(conv, arrays)
    with pytest.raises(ValueError, match="run insert-layouts"):
        blocked.conv2d_nchwc(op, arrays)


@pytest.mark.parametrize(
    ("name", "build", "shapes", "kwargs", "target", "padding", "reason"),
    [
        (
            "conv2d_nchwc",
            conv,
            [(1, 8, 8, 8), (8, 2, 3, 3)],
            {"groups": 4},
            AVX2,
            True,
            "grouped convolution (groups=4) with 2 input and 2 output channels a group, not "
            "multiples of the block 8",
        ),
        (
            "conv2d_nchwc",
            conv,
            [(1, 32, 8, 8), (12, 16, 3, 3)],
            {"groups": 2},
            AVX2,
            True,
            "grouped convolution (groups=2) with 16 input and 6 output channels a group, not "
            "multiples of the block 8",
        ),
        (
            "conv2d_nchwc",
            conv,
            [(1, 5, 32, 32), (16, 5, 3, 3)],
            {},
            AVX2,
            False,
            "5 input channels are not a multiple of the block 8 and padding is off",
        ),
        (
            "conv2d_nchwc",
            conv,
            [(1, 16, 32, 32), (5, 16, 3, 3)],
            {},
            AVX512,
            False,
            "5 output channels are not a multiple of the block 16 and padding is off",
        ),
        (
            "conv2d_nchwc",
            conv,
            [(1, 3, 4, 6), (8, 3, 3, 3)],
            {},
            AVX2,
            True,
            "too small to gain from blocking: 1,728 MACs < 16,384",
        ),
        (
            "dwconv2d_nchwc",
            depthwise,
            [(1, 3, 64, 64), (3, 1, 3, 3)],
            {},
            AVX2,
            False,
            "3 input channels are not a multiple of the block 8 and padding is off",
        ),
        (
            "dwconv2d_nchwc",
            depthwise,
            [(1, 8, 8, 8), (8, 1, 3, 3)],
            {},
            AVX2,
            True,
            "too small to gain from blocking: 2,592 MACs < 16,384",
        ),
    ],
    ids=[
        "grouped",
        "grouped-outputs",
        "input-channels",
        "output-channels",
        "too-small",
        "dw-channels",
        "dw-too-small",
    ],
)
def test_conv_refusals(
    name: str,
    build: Callable[..., Operation],
    shapes: list[tuple[int, ...]],
    kwargs: dict[str, Any],
    target: Target,
    padding: bool,
    reason: str,
) -> None:
    op = build_plain(build, [np.zeros(s) for s in shapes], **kwargs)
    assert KERNELS[name].accepts(op, target, padding) == reason


def test_conv_acceptance() -> None:
    """A large enough convolution is accepted, padded when padding is allowed (its input
    only where it is blocked); depthwise
    convolutions (a one-channel one among them) are the depthwise kernel's only, and a
    grouped one is no depthwise kernel's business."""
    op = build_plain(conv, [np.zeros((1, 3, 32, 32)), np.zeros((16, 3, 3, 3))])
    assert KERNELS["conv2d_nchwc"].accepts(op, AVX2, True) is None
    # Its 3 input channels are read plain, so they need no padding.
    assert KERNELS["conv2d_nchwc"].accepts(op, AVX2, False) is None
    one = build_plain(conv, [np.zeros((1, 1, 64, 64)), np.zeros((1, 1, 5, 5))])
    assert not KERNELS["conv2d_nchwc"].applies(one)
    selection = registry().select(one, AVX2, True)
    assert selection is not None and selection.kernel.name == "dwconv2d_nchwc"
    grouped = build_plain(conv, [np.zeros((1, 8, 8, 8)), np.zeros((8, 2, 3, 3))], groups=4)
    assert KERNELS["conv2d_nchwc"].applies(grouped)
    assert not KERNELS["dwconv2d_nchwc"].applies(grouped)


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
