"""Prepared blocked kernels (`Kernel.prepare`) against their unprepared selves: writing into a
fresh buffer, into operand 0's own memory (in place), and into a strided view (a halo's
interior, a concat's slot), with or without the input in that memory, must give the very bits
the unprepared kernel returns (NaN where it has NaN, the same signed zeros, zero padding
lanes) and leave memory around the view alone."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.blocked import movement
from nnlayout.kernels.registry import Target
from nnlayout.tests.helpers import (
    AVX2,
    KERNELS,
    NARY_CASES,
    SENTINEL,
    TEST_TARGETS,
    UNARY_CASES,
    avg_pool,
    batch_norm,
    build_in_layouts,
    concat,
    conv,
    depthwise,
    interior,
    max_pool,
    same_bits,
    special,
    unary,
)

LAYOUTS = ("NCHW8c", "NHWC", "")  # NCHW8c with 5 channels: 3 padding lanes per pixel


def build(
    name: str,
    target: Target,
    builder: Callable[..., Operation],
    arrays: Sequence[np.ndarray],
    any_layout: str = "",
    **kwargs: Any,
) -> tuple[Operation, list[np.ndarray]]:
    """The op on values in kernel `name`'s layouts, and `arrays` packed into them."""
    op, packed, _ = build_in_layouts(name, target, builder, arrays, any_layout, **kwargs)
    return op, packed


def placements(
    inputs: Sequence[np.ndarray], shape: Sequence[int], in_place: bool
) -> Iterator[tuple[str, list[np.ndarray], np.ndarray, np.ndarray | None]]:
    """(name, inputs, destination of `shape`, buffer the destination views or None) for a
    fresh buffer full of NaN, a strided view, and with `in_place` the memory of operand 0,
    dense or strided (operand 0 and the destination are two views of that memory)."""
    x, rest = inputs[0], list(inputs[1:])
    yield "fresh", list(inputs), np.full(shape, np.nan, np.float32), None
    big, view = interior(shape)
    yield "strided", list(inputs), view, big
    if in_place:
        memory = x.copy()
        yield "in_place", [memory[...], *rest], memory[...], None
        big, view = interior(x.shape)
        view[...] = x
        yield "strided_in_place", [view[...], *rest], view, big


def check_prepared(name: str, op: Operation, inputs: Sequence[np.ndarray]) -> None:
    kernel = KERNELS[name]
    assert kernel.prepare is not None
    with np.errstate(all="ignore"):
        want = kernel.impl(op, [x.copy() for x in inputs])
        bound = kernel.prepare(op, None)
        for where, ins, out, big in placements(inputs, want.shape, kernel.in_place == 0):
            bound(ins, out)
            try:
                same_bits(out, want)
            except AssertionError as error:
                raise AssertionError(f"{name} into a {where} destination: {error}") from None
            if big is not None:
                border = np.ones(big.shape, bool)
                border[(slice(None), *(slice(1, -1) for _ in big.shape[1:]))] = False
                assert np.all(big[border] == SENTINEL), f"{name} ({where}) wrote outside"


# ------------------------------------------------------------------- element-wise
PREPARED_UNARY = {
    **UNARY_CASES,
    "relu6": unary(nn.ClipOp, min=0.0, max=6.0),
    "clip_above_zero": unary(nn.ClipOp, min=0.5, max=2.0),  # not zero-preserving
    "clip_max_zero": unary(nn.ClipOp, max=0.0),
    "clip_negative_zero": unary(nn.ClipOp, min=-0.0, max=6.0),
    "leaky_relu_negative": unary(nn.LeakyReluOp, alpha=-2.0),
    "leaky_relu_steep": unary(nn.LeakyReluOp, alpha=3.0),
}


def kernel_name(case: str) -> str:
    for kind in ("relu6", "clip", "leaky_relu"):
        if case.startswith(kind):
            return ("clip" if kind == "relu6" else kind) + "_any"
    return case + "_any"


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", PREPARED_UNARY)
def test_unary(case: str, layout: str) -> None:
    rng = np.random.default_rng(len(case))
    x = special(rng, 2, 5, 3, 4)
    name = kernel_name(case)
    op, packed = build(name, AVX2, PREPARED_UNARY[case], [x], any_layout=layout)
    check_prepared(name, op, packed)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(
    ("case", "operands"), [*((case, 2) for case in NARY_CASES), ("sum", 3), ("sum", 1)]
)
def test_nary(case: str, operands: int, layout: str) -> None:
    rng = np.random.default_rng(operands)
    arrays = [special(rng, 2, 5, 3, 4) for _ in range(operands)]
    arrays[-1].reshape(-1)[::5] = 0  # x / 0 and 0 / 0 in real lanes too
    op, packed = build(f"{case}_any", AVX2, NARY_CASES[case], arrays, any_layout=layout)
    check_prepared(f"{case}_any", op, packed)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", ["add", "sub", "mul", "div", "max", "min", "prelu"])
def test_nary_with_a_per_channel_operand(case: str, layout: str) -> None:
    """A [1, C, 1, 1] operand (what extend-ranks makes of [C, 1, 1]) is read by the ufuncs
    broadcast, in any layout; the quotient's padding is re-zeroed."""
    rng = np.random.default_rng(3)
    arrays = [special(rng, 2, 5, 3, 4), special(rng, 1, 5, 1, 1)]
    op, packed = build(f"{case}_any", AVX2, NARY_CASES[case], arrays, any_layout=layout)
    check_prepared(f"{case}_any", op, packed)


def test_sum_with_a_later_operand_in_the_destination() -> None:
    """sum(x, y, x) in place over x: x must not be overwritten before its second read."""
    rng = np.random.default_rng(1)
    x, y = special(rng, 1, 5, 2, 3), special(rng, 1, 5, 2, 3)
    op, (px, py, _) = build("sum_any", AVX2, NARY_CASES["sum"], [x, y, x], any_layout="NCHW8c")
    want = KERNELS["sum_any"].impl(op, [px, py, px])
    memory = px.copy()
    with np.errstate(all="ignore"):
        KERNELS["sum_any"].prepare(op, None)([memory[...], py, memory[...]], memory[...])
    same_bits(memory, want)


def test_other_dtype_takes_the_unprepared_kernel() -> None:
    rng = np.random.default_rng(2)
    x = special(rng, 1, 5, 2, 3)
    op, packed = build("sigmoid_any", AVX2, UNARY_CASES["sigmoid"], [x], any_layout="NCHW8c")
    out = np.full(packed[0].shape, np.nan)
    with np.errstate(all="ignore"):
        KERNELS["sigmoid_any"].prepare(op, None)(packed, out)
        want = KERNELS["sigmoid_any"].impl(op, packed)
    same_bits(out, want.astype(np.float64))


def test_all_elementwise_and_pooling_kernels_are_prepared() -> None:
    # pad_any and resize_any compute through numpy's pad and takes, which allocate anyway
    copies = {k.name for k in movement.KERNELS if k.name in ("pad_any", "resize_any")}
    names = [k.name for k in KERNELS.values() if k.name.endswith("_any") and k.name not in copies]
    # The reductions compute in a float64 temporary, which a prepared kernel would copy too.
    unprepared = {"global_avg_pool_any", "reduce_any"}
    assert {n for n in names if KERNELS[n].prepare is None} == unprepared
    assert all(
        KERNELS[n].prepare is not None
        for n in ("conv2d_nchwc", "dwconv2d_nchwc", "batch_norm_nchwc", "concat_nchwc")
    )


# ------------------------------------------------------------------------ pooling
POOL_GEOMETRIES = {
    "plain": {"kernel": (2, 2), "strides": (2, 2)},
    "padded": {"kernel": (3, 3), "strides": (2, 2), "pads": (1, 1, 1, 1)},
    "uneven_ceil": {"kernel": (3, 2), "strides": (2, 2), "pads": (1, 0, 2, 1), "ceil_mode": True},
    "dilated": {"kernel": (2, 2), "strides": (1, 1), "dilations": (2, 2), "pads": (2, 0, 2, 1)},
}


@pytest.mark.parametrize("signed_zeros_only", [False, True])
@pytest.mark.parametrize("layout", (*LAYOUTS, "NWHC8c"))
@pytest.mark.parametrize("geometry", POOL_GEOMETRIES)
@pytest.mark.parametrize("average", [False, True])
def test_pooling(average: bool, geometry: str, layout: str, signed_zeros_only: bool) -> None:
    rng = np.random.default_rng(len(geometry))
    x = special(rng, 2, 5, 7, 6, signed_zeros_only=signed_zeros_only)
    kwargs = dict(POOL_GEOMETRIES[geometry])
    name = "avg_pool2d_any" if average else "max_pool2d_any"
    if average:
        kwargs["count_include_pad"] = geometry != "plain"
    op, packed = build(
        name, AVX2, avg_pool if average else max_pool, [x], any_layout=layout, **kwargs
    )
    check_prepared(name, op, packed)


# ------------------------------------------------------- convolution, batch norm, concat
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize(
    ("channels", "groups"), [((3, 5), 1), ((5, 3), 1), ((8, 16), 1), ((24, 48), 3)]
)
def test_conv2d(channels: tuple[int, int], groups: int, bias: bool) -> None:
    rng = np.random.default_rng(channels[0])
    c_in, c_out = channels
    arrays = [special(rng, 2, c_in, 6, 5), special(rng, c_out, c_in // groups, 3, 3)]
    if bias:
        arrays.append(special(rng, c_out))
    op, packed = build(
        "conv2d_nchwc",
        TEST_TARGETS[8],
        conv,
        arrays,
        pads=(1, 0, 1, 2),
        strides=(1, 2),
        groups=groups,
    )
    check_prepared("conv2d_nchwc", op, packed)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize(
    ("channels", "strides", "dilations"), [(5, (1, 1), (1, 1)), (12, (2, 1), (1, 2))]
)
def test_dwconv2d(
    channels: int, strides: tuple[int, int], dilations: tuple[int, int], bias: bool
) -> None:
    rng = np.random.default_rng(channels)
    arrays = [special(rng, 2, channels, 7, 6), special(rng, channels, 1, 3, 3)]
    if bias:
        arrays.append(special(rng, channels))
    op, packed = build(
        "dwconv2d_nchwc",
        TEST_TARGETS[8],
        depthwise,
        arrays,
        pads=(1, 0, 2, 1),
        strides=strides,
        dilations=dilations,
    )
    check_prepared("dwconv2d_nchwc", op, packed)


@pytest.mark.parametrize("epsilon", [1e-5, 0.0])
def test_batch_norm(epsilon: float) -> None:
    rng = np.random.default_rng(4)
    arrays = [
        special(rng, 2, 5, 3, 4),
        special(rng, 5),
        special(rng, 5),
        special(rng, 5),
        np.abs(special(rng, 5)),
    ]
    op, packed = build("batch_norm_nchwc", TEST_TARGETS[8], batch_norm, arrays, epsilon=epsilon)
    check_prepared("batch_norm_nchwc", op, packed)


def test_concat() -> None:
    rng = np.random.default_rng(5)
    arrays = [special(rng, 2, c, 3, 4) for c in (8, 16, 8)]
    op, packed = build("concat_nchwc", TEST_TARGETS[8], concat, arrays)
    check_prepared("concat_nchwc", op, packed)


def test_concat_with_inputs_in_their_slots() -> None:
    """An in-place concat: each input already is a view of its slot in the destination."""
    rng = np.random.default_rng(6)
    arrays = [special(rng, 1, c, 3, 4) for c in (8, 16)]
    op, packed = build("concat_nchwc", TEST_TARGETS[8], concat, arrays)
    want = KERNELS["concat_nchwc"].impl(op, packed)
    memory = want.copy()
    slots = [memory[:, :1], memory[:, 1:]]
    KERNELS["concat_nchwc"].prepare(op, None)(slots, memory[...])
    same_bits(memory, want)
    assert shape_of(op.output) == (1, 24, 3, 4)
