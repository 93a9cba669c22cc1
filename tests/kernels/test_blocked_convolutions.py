"""The blocked convolution kernels (dense, grouped, depthwise) against the reference kernels:
pack -> blocked kernel -> unpack gives the reference result over channels and geometries,
with NaN and Inf, padding lanes exactly zero afterwards; the layouts they ask for follow the
target and are checked as typed; every refusal reason is reachable."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.ir import Operation
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.kernels import blocked
from nnlayout.kernels.blocked import BlockedOptions
from nnlayout.kernels.providers import registry
from nnlayout.kernels.registry import Target
from nnlayout.tests.helpers import (
    AVX2,
    AVX512,
    BLOCKS,
    KERNELS,
    TEST_TARGETS,
    build_plain,
    conv,
    depthwise,
    tensor,
)
from nnlayout.tests.kernels.test_blocked_kernels import CHANNELS, check, poison, random, run


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
