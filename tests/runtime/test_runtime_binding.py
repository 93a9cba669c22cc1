"""Ops bound once for generated code and the interpreter (`runtime/binding.bind_compute`):
reorders as strided copies between the two layouts (`reorder_into`), and the prepared
reference kernels (`PREPARED_REFERENCE_KERNELS`), must give the very bits of the unbound path
(unpack then pack; the reference kernel), NaN, infinities and signed zeros included, zero
padding lanes in the destination whatever it held, and write nothing outside a strided
destination."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import pytest
from xdsl.dialects.builtin import MemRefType, TensorType, f32
from xdsl.ir import Operation
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.dialects.compute import compute_of
from nnlayout.dialects.kernel_attr import KERNEL_ATTR
from nnlayout.dialects.layout import LayoutSpec, ReorderOp
from nnlayout.kernels import reference
from nnlayout.kernels.providers import registry
from nnlayout.kernels.registry import BindingSession
from nnlayout.kernels.targets import get_target
from nnlayout.kernels.values import to_logical, to_physical
from nnlayout.runtime.binding import bind_compute, relative_difference
from nnlayout.runtime.values import BoundCompute, bind_reorder, reorder_into
from nnlayout.tests.helpers import SENTINEL, interior, same_bits, special, tensor


def physical_shape(value_type: TensorType) -> tuple[int, ...]:
    return to_physical(np.zeros(value_type.get_shape(), np.float32), value_type).shape


def bound(op: Operation) -> BoundCompute:
    """`op` (detached) in an `nn.compute`, with its reference kernel chosen as select-dispatch
    would (a reorder has none), bound by `bind_compute`."""
    if not isinstance(op, ReorderOp):
        kernel = registry().lookup(op.name.removeprefix("nn.") + "_ref")
        op.attributes[KERNEL_ATTR] = kernel.attribute(op, get_target("ref"))
    ins = [create_ssa_value(MemRefType(f32, physical_shape(v.type))) for v in op.operands]
    outs = [create_ssa_value(MemRefType(f32, physical_shape(op.results[0].type)))]
    return bind_compute(compute_of(op, ins, outs))


def check_into(
    run: Callable[[Sequence[np.ndarray], np.ndarray], None],
    inputs: Sequence[np.ndarray],
    want: np.ndarray,
) -> None:
    """`run(inputs, out)` gives `want` into a NaN-filled buffer and into a strided view whose
    surroundings it leaves alone."""
    fresh = np.full(want.shape, np.nan, want.dtype)
    run(inputs, fresh)
    same_bits(fresh, want)
    big, view = interior(want.shape)
    run(inputs, view)
    same_bits(view, want)
    border = np.ones(big.shape, bool)
    border[(slice(None), *(slice(1, -1) for _ in big.shape[1:]))] = False
    assert np.all(big[border] == SENTINEL), "wrote outside the destination"


# --------------------------------------------------------------------------- reorders
LAYOUT_PAIRS = [
    ("", "NHWC"),
    ("NHWC", ""),
    ("", "NCHW8c"),
    ("NCHW8c", ""),
    ("NCHW8c", "NHWC"),
    ("NHWC", "NCHW16c"),
    ("NCHW8c", "NCHW16c"),
    ("NCHW16c", "NCHW4c"),
    ("NCHW4c2c", "NHWC8c"),
    ("NCHW8c4h", "NCWH"),
    ("CNHW2n", "NCHW8c"),
    ("NCHW1c", "NCHW8c"),
]
SHAPES = [(1, 2048, 1, 1), (2, 19, 5, 7), (1, 3, 9, 8), (3, 24, 4, 2)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize(("source", "target"), LAYOUT_PAIRS, ids=lambda p: p or "plain")
def test_reorder_is_unpack_then_pack(source: str, target: str, shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(sum(shape))
    source_type, target_type = tensor(shape, source), tensor(shape, target)
    x = to_physical(special(rng, *shape), source_type)
    want = to_physical(to_logical(x, source_type), target_type)
    move = reorder_into(source_type, target_type)
    assert move is not None
    check_into(lambda inputs, out: move(inputs[0], out), [x], want)
    strided = np.full(tuple(2 * n for n in x.shape), SENTINEL, np.float32)[
        tuple(slice(None, None, 2) for _ in x.shape)
    ]
    strided[...] = x
    check_into(lambda inputs, out: move(inputs[0], out), [strided], want)


@pytest.mark.parametrize(
    ("source", "target", "shape"),
    [
        ("", "NHWC", (1, 3, 64, 64)),  # a short innermost destination digit: copied lane by lane
        ("", "NCHW8c", (1, 3, 64, 64)),  # the same, and 5 padding lanes of 8
        ("NHWC", "", (1, 3, 64, 64)),
    ],
)
def test_reorder_of_images(source: str, target: str, shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(3)
    source_type, target_type = tensor(shape, source), tensor(shape, target)
    x = to_physical(special(rng, *shape), source_type)
    run = bind_reorder(source_type, target_type)
    check_into(
        lambda inputs, out: run(inputs, [out]),
        [x],
        to_physical(to_logical(x, source_type), target_type),
    )


def test_reorder_between_blocks_that_do_not_divide() -> None:
    """8c and 12c split channels at units neither divides: the unbound path runs it."""
    shape = (1, 24, 3, 3)
    source_type, target_type = tensor(shape, "NCHW8c"), tensor(shape, "NCHW12c")
    assert reorder_into(source_type, target_type) is None
    x = to_physical(special(np.random.default_rng(4), *shape), source_type)
    run = bound(ReorderOp(create_ssa_value(source_type), target_type))
    check_into(
        lambda inputs, out: run(inputs, [out]),
        [x],
        LayoutSpec.parse("NCHW12c").pack(LayoutSpec.parse("NCHW8c").unpack(x, shape)),
    )


# -------------------------------------------------------------- prepared reference kernels
def softmax_input(rng: np.random.Generator, shape: tuple[int, ...], axis: int) -> np.ndarray:
    """Finite values, signed zeros and denormals, with lines along `axis` of all -inf, with
    one +inf, with one NaN and with some -inf."""
    size = shape[axis]
    lines = (rng.standard_normal((math.prod(shape) // size, size)) * 4).astype(np.float32)
    lines.flat[:6] = [0.0, -0.0, 1e-45, -1e-45, 88.0, -88.0]
    lines[1] = -np.inf
    lines[2, 1] = np.inf
    lines[3, -1] = np.nan
    lines[4, ::2] = -np.inf
    moved = lines.reshape(*shape[:axis], *shape[axis + 1 :], size)
    return np.ascontiguousarray(np.moveaxis(moved, -1, axis))


@pytest.mark.parametrize(
    ("shape", "axis"), [((5, 1000), 1), ((2, 8, 5, 5), 1), ((2, 8, 5, 5), 3), ((7, 5), 0)]
)
def test_softmax(shape: tuple[int, ...], axis: int) -> None:
    x = softmax_input(np.random.default_rng(len(shape)), shape, axis)
    op = nn.SoftmaxOp(create_ssa_value(tensor(shape)), axis)
    with np.errstate(all="ignore"):
        want = reference.softmax(op, [x])
        run = bound(op)
        check_into(lambda inputs, out: run(inputs, [out]), [x], want)


@pytest.mark.parametrize(
    "build",
    [
        lambda v: nn.FlattenOp(v, 1),
        lambda v: nn.FlattenOp(v, 2),
        lambda v: nn.ReshapeOp(v, (5, 4, 6)),
    ],
)
def test_flatten_and_reshape(build: Callable[..., Operation]) -> None:
    x = special(np.random.default_rng(5), 2, 3, 4, 5)
    op = build(create_ssa_value(tensor(x.shape)))
    run = bound(op)
    check_into(lambda inputs, out: run(inputs, [out]), [x], reference.reshape(op, [x]))


def test_reference_kernels_are_prepared_on_plain_values_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A reference kernel running on unpacked blocked values keeps the unbound path."""
    prepared: list[Operation] = []

    def spy(
        op: nn.SoftmaxOp, session: BindingSession | None
    ) -> Callable[[Sequence[np.ndarray], np.ndarray], None]:
        prepared.append(op)
        return reference._softmax_into(op, session)

    kernels = registry().kernels
    monkeypatch.setitem(kernels, "softmax_ref", replace(kernels["softmax_ref"], prepare=spy))
    shape = (1, 5, 3, 3)
    x = special(np.random.default_rng(6), *shape)
    with np.errstate(all="ignore"):
        want = reference.softmax(nn.SoftmaxOp(create_ssa_value(tensor(shape)), 1), [x])
        plain = nn.SoftmaxOp(create_ssa_value(tensor(shape)), 1)
        run = bound(plain)
        check_into(lambda inputs, out: run(inputs, [out]), [x], want)
        assert prepared == [plain]
        run = bound(nn.SoftmaxOp(create_ssa_value(tensor(shape, "NCHW8c")), 1))
        packed = LayoutSpec.parse("NCHW8c")
        check_into(lambda inputs, out: run(inputs, [out]), [packed.pack(x)], packed.pack(want))
    assert prepared == [plain]


def test_registered_reference_kernels_carry_their_preparation() -> None:
    for op_type, prepare in reference.PREPARED_REFERENCE_KERNELS.items():
        assert registry().lookup(op_type.name.removeprefix("nn.") + "_ref").prepare is prepare


def test_relative_difference_counts_nan_masks_and_infinities() -> None:
    """A NaN where the oracle has none is no match (max() with NaN kept the old worst); NaN
    and infinities in the same places are; masks and indices compare exactly."""
    ones = np.ones(3, np.float32)
    assert relative_difference([ones], [np.array([1, np.nan, 1], np.float32)]) == math.inf
    nan_row = np.array([1, np.nan, -np.inf], np.float32)
    assert relative_difference([nan_row], [nan_row.copy()]) == 0.0
    assert relative_difference([nan_row], [np.array([1, np.nan, np.inf], np.float32)]) == math.inf
    assert relative_difference([np.array([True])], [np.array([False])]) == math.inf
    assert relative_difference([np.array([3], np.int64)], [np.array([3], np.int64)]) == 0.0
    assert relative_difference([ones], [ones + 1e-5]) == pytest.approx(1e-5, rel=1e-2)
    assert relative_difference([ones], [ones[:2]]) == math.inf
