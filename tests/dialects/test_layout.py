"""LayoutSpec arithmetic against hand-computed cases, pack/unpack against element-wise index
formulas, and the layout dialect's attributes and parse errors."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import Float16Type, IntegerType, TensorType, f32, f64, i1, i8
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects.layout import (
    Block,
    LayoutAttr,
    LayoutSpec,
    StorageAttr,
    element_bytes,
    layout_of,
    storage_of,
    verify_encoding,
)


def row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(math.prod(shape[i + 1 :]) for i in range(len(shape)))


# ------------------------------------------------------------------ parsing
@pytest.mark.parametrize(
    ("text", "dims", "logical"),
    [
        ("NCHW", ("N", "C", "H", "W"), ("N", "C", "H", "W")),
        ("NHWC", ("N", "H", "W", "C"), ("N", "C", "H", "W")),
        ("NCHW16c", ("N", "C", "H", "W", Block("C", 16)), ("N", "C", "H", "W")),
        ("OIHW16i16o", ("O", "I", "H", "W", Block("I", 16), Block("O", 16)), ("O", "I", "H", "W")),
        (
            "OIHW8i16o2i",
            ("O", "I", "H", "W", Block("I", 8), Block("O", 16), Block("I", 2)),
            ("O", "I", "H", "W"),
        ),
        ("NCDHW8c", ("N", "C", "D", "H", "W", Block("C", 8)), ("N", "C", "D", "H", "W")),
        ("WHCN", ("W", "H", "C", "N"), ("N", "C", "H", "W")),
        ("NK", ("N", "K"), ("N", "K")),
        ("KN", ("K", "N"), ("N", "K")),
    ],
)
def test_parse(text: str, dims: tuple[str | Block, ...], logical: tuple[str, ...]) -> None:
    spec = LayoutSpec.parse(text)
    assert spec.dims == dims
    assert spec.logical_axes == logical
    assert spec.rank == len(logical)


def test_properties() -> None:
    assert LayoutSpec.parse("NCHW").is_identity
    assert not LayoutSpec.parse("NHWC").is_identity
    assert not LayoutSpec.parse("NHWC").is_blocked
    blocked = LayoutSpec.parse("OIHW8i16o2i")
    assert blocked.is_blocked and not blocked.is_identity
    assert blocked.blocks_of("I") == (8, 2)
    assert blocked.block_product("I") == 16
    assert blocked.blocks_of("O") == (16,)
    assert blocked.block_product("H") == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "layout string is empty"),
        (
            "NCHW16x",
            "layout 'NCHW16x': block '16x' splits axis 'X', which the layout does not have",
        ),
        ("NCHW0c", "layout 'NCHW0c': block '0c' has factor 0; factors must be positive"),
        (
            "NCHWc",
            "layout 'NCHWc': block 'c' needs a factor, e.g. '16c' (a whole axis is upper "
            "case: 'C')",
        ),
        ("OIhw8i16o2i", "layout 'OIhw8i16o2i': block 'h' needs a factor"),
        (
            "16C",
            "layout '16C': whole axis 'C' cannot have a factor ('16C'); write a block in "
            "lower case, e.g. '16c'",
        ),
        ("NCHWC", "layout 'NCHWC': axis 'C' appears twice"),
        ("NC-HW", "layout 'NC-HW': unexpected '-' at position 2"),
        ("NCHW16", "layout 'NCHW16': unexpected '16' at position 4"),
        (" NCHW", "layout ' NCHW': unexpected ' ' at position 0"),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(VerifyException) as caught:
        LayoutSpec.parse(text)
    assert str(caught.value).startswith(message)


def test_rank_mismatch() -> None:
    with pytest.raises(
        VerifyException, match="layout 'NCHW16c' has 4 axes but the tensor has rank 3"
    ):
        LayoutSpec.parse("NCHW16c").physical_shape((1, 3, 8))


# --------------------------------------------------------- physical arithmetic
@pytest.mark.parametrize(
    ("text", "shape", "padded", "physical"),
    [
        # C=3 in NCHW16c: one block of 16 lanes, 13 of them padding.
        ("NCHW16c", (1, 3, 224, 224), (1, 16, 224, 224), (1, 1, 224, 224, 16)),
        # C=17: two blocks.
        ("NCHW16c", (2, 17, 5, 7), (2, 32, 5, 7), (2, 2, 5, 7, 16)),
        ("NCHW16c", (1, 32, 4, 4), (1, 32, 4, 4), (1, 2, 4, 4, 16)),
        ("NCHW8c", (1, 64, 56, 56), (1, 64, 56, 56), (1, 8, 56, 56, 8)),
        ("NHWC", (1, 3, 8, 10), (1, 3, 8, 10), (1, 8, 10, 3)),
        ("NCHW", (2, 3, 4, 5), (2, 3, 4, 5), (2, 3, 4, 5)),
        ("OIHW16i16o", (64, 3, 7, 7), (64, 16, 7, 7), (4, 1, 7, 7, 16, 16)),
        ("OIHW16i16o", (10, 20, 3, 3), (16, 32, 3, 3), (1, 2, 3, 3, 16, 16)),
        ("OIHW8i16o2i", (32, 20, 3, 3), (32, 32, 3, 3), (2, 2, 3, 3, 8, 16, 2)),
        ("OIHW8i16o2i", (1, 1, 1, 1), (16, 16, 1, 1), (1, 1, 1, 1, 8, 16, 2)),
        ("NCDHW8c", (1, 9, 2, 3, 4), (1, 16, 2, 3, 4), (1, 2, 2, 3, 4, 8)),
        ("KN", (4, 6), (4, 6), (6, 4)),
    ],
)
def test_shapes(
    text: str, shape: tuple[int, ...], padded: tuple[int, ...], physical: tuple[int, ...]
) -> None:
    spec = LayoutSpec.parse(text)
    assert spec.padded_shape(shape) == padded
    assert spec.physical_shape(shape) == physical
    assert spec.physical_strides(shape) == row_major(physical)
    assert spec.element_count(shape) == math.prod(physical)
    assert spec.padding_elements(shape) == math.prod(physical) - math.prod(shape)


def test_hand_computed_sizes() -> None:
    nchw16c = LayoutSpec.parse("NCHW16c")
    # An RGB 224x224 image in NCHW16c: 224*224*16 floats, 13 of every 16 lanes padding.
    assert nchw16c.physical_strides((1, 3, 224, 224)) == (802816, 802816, 3584, 16, 1)
    assert nchw16c.element_count((1, 3, 224, 224)) == 802816
    assert nchw16c.byte_size((1, 3, 224, 224), 4) == 3211264
    assert nchw16c.padding_elements((1, 3, 224, 224)) == 224 * 224 * 13
    # C=17: 2 blocks of 16, 15 padded channels per pixel.
    assert nchw16c.physical_strides((1, 17, 2, 2)) == (128, 64, 32, 16, 1)
    assert nchw16c.padding_elements((1, 17, 2, 2)) == 4 * 15
    assert nchw16c.byte_size((1, 17, 2, 2), 2) == 256
    nhwc = LayoutSpec.parse("NHWC")
    assert nhwc.physical_strides((1, 3, 8, 10)) == (240, 30, 3, 1)
    assert nhwc.padding_elements((1, 3, 8, 10)) == 0
    assert nhwc.byte_size((1, 3, 8, 10), 4) == 960
    weights = LayoutSpec.parse("OIHW16i16o")
    assert weights.physical_strides((64, 3, 7, 7)) == (12544, 12544, 1792, 256, 16, 1)
    assert weights.byte_size((64, 3, 7, 7), 4) == 64 * 16 * 49 * 4
    assert weights.padding_elements((64, 3, 7, 7)) == 64 * 13 * 49
    multi = LayoutSpec.parse("OIHW8i16o2i")
    assert multi.physical_strides((32, 20, 3, 3)) == (4608, 2304, 768, 256, 32, 2, 1)
    assert multi.padding_elements((32, 20, 3, 3)) == 32 * 12 * 9


# ------------------------------------------------------------- pack / unpack
def test_pack_nchw16c_by_index() -> None:
    x = np.arange(1, 1 + 2 * 17 * 3 * 2, dtype=np.float32).reshape(2, 17, 3, 2)
    spec = LayoutSpec.parse("NCHW16c")
    packed = spec.pack(x)
    assert packed.shape == (2, 2, 3, 2, 16)
    assert packed.flags.c_contiguous
    for n, c, h, w in itertools.product(*map(range, x.shape)):
        assert packed[n, c // 16, h, w, c % 16] == x[n, c, h, w]
    # Channels 17..31 are padding: zero, and nothing else is zero (x starts at 1).
    assert not packed[:, 1, :, :, 1:].any()
    assert np.count_nonzero(packed == 0) == spec.padding_elements(x.shape)
    np.testing.assert_array_equal(spec.unpack(packed, x.shape), x)


def test_pack_nhwc_is_a_transpose() -> None:
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    spec = LayoutSpec.parse("NHWC")
    np.testing.assert_array_equal(spec.pack(x), x.transpose(0, 2, 3, 1))
    np.testing.assert_array_equal(spec.unpack(spec.pack(x), x.shape), x)


def test_pack_oihw8i16o2i_by_index() -> None:
    w = np.arange(1, 1 + 18 * 20 * 2 * 3, dtype=np.float32).reshape(18, 20, 2, 3)
    spec = LayoutSpec.parse("OIHW8i16o2i")
    packed = spec.pack(w)
    assert packed.shape == (2, 2, 2, 3, 8, 16, 2)
    # i = 16 * I_outer + 2 * i8 + i2: the later block (2i) is the inner one.
    for o, i, h, x in itertools.product(*map(range, w.shape)):
        assert packed[o // 16, i // 16, h, x, (i % 16) // 2, o % 16, i % 2] == w[o, i, h, x]
    assert np.count_nonzero(packed == 0) == spec.padding_elements(w.shape)
    np.testing.assert_array_equal(spec.unpack(packed, w.shape), w)


def test_pack_oihw16i16o_by_index() -> None:
    w = np.arange(1, 1 + 20 * 3 * 2 * 2, dtype=np.float32).reshape(20, 3, 2, 2)
    packed = LayoutSpec.parse("OIHW16i16o").pack(w)
    assert packed.shape == (2, 1, 2, 2, 16, 16)
    for o, i, h, x in itertools.product(*map(range, w.shape)):
        assert packed[o // 16, i // 16, h, x, i % 16, o % 16] == w[o, i, h, x]
    # Padded input channels (i >= 3) and padded output channels (o >= 20) are zero.
    assert not packed[:, :, :, :, 3:, :].any()
    assert not packed[1, :, :, :, :, 4:].any()


def test_pack_pad_value() -> None:
    x = np.ones((1, 3, 2, 2), dtype=np.float32)
    packed = LayoutSpec.parse("NCHW8c").pack(x, pad_value=-np.inf)
    assert np.all(packed[..., :3] == 1)
    assert np.all(packed[..., 3:] == -np.inf)


LAYOUTS_4D = ["NCHW", "NHWC", "NCHW8c", "NCHW16c", "NCHW4c2c", "CHWN8n", "NHWC4c4w"]
WEIGHT_LAYOUTS = ["OIHW16i16o", "OIHW8i16o2i", "OIHW4o", "HWIO"]


@settings(max_examples=40, deadline=None)
@given(
    layout=st.sampled_from(LAYOUTS_4D + WEIGHT_LAYOUTS),
    shape=st.tuples(*[st.integers(1, 19)] * 2, *[st.integers(1, 4)] * 2),
    seed=st.integers(0, 2**16),
)
def test_pack_unpack_round_trip(layout: str, shape: tuple[int, ...], seed: int) -> None:
    spec = LayoutSpec.parse(layout)
    x = np.random.default_rng(seed).uniform(0.5, 1.5, shape).astype(np.float32)
    packed = spec.pack(x)
    assert packed.shape == spec.physical_shape(shape)
    assert packed.size == spec.element_count(shape)
    # Every logical element appears once; every other lane is zero padding.
    assert np.count_nonzero(packed) == x.size
    assert np.isclose(packed.sum(dtype=np.float64), x.sum(dtype=np.float64))
    np.testing.assert_array_equal(spec.unpack(packed, shape), x)


@settings(max_examples=40, deadline=None)
@given(
    layout=st.sampled_from(LAYOUTS_4D + WEIGHT_LAYOUTS),
    shape=st.tuples(*[st.integers(1, 19)] * 2, *[st.integers(1, 4)] * 2),
    contiguous=st.booleans(),
)
def test_zero_padding_clears_exactly_the_padding_lanes(
    layout: str, shape: tuple[int, ...], contiguous: bool
) -> None:
    """On a C-contiguous array through its cached lane indices, else through a mask."""
    spec = LayoutSpec.parse(layout)
    *outer, last = spec.physical_shape(shape)
    physical = np.full((*outer, last * (1 if contiguous else 2)), np.nan, np.float32)
    if not contiguous:
        physical = physical[..., ::2]  # every other element: strided
    spec.zero_padding(physical, shape)
    mask = spec.padding_mask(shape)
    assert np.all(physical[mask] == 0) and np.all(np.isnan(physical[~mask]))


# --------------------------------------------------------- attributes, helpers
def test_layout_attr() -> None:
    attr = LayoutAttr("NCHW16c")
    assert attr.spec == LayoutSpec.parse("NCHW16c")
    with pytest.raises(VerifyException, match="axis 'C' appears twice"):
        LayoutAttr("NCHWC")


def test_storage_attr() -> None:
    assert StorageAttr("csr").kind.data == "csr"
    with pytest.raises(VerifyException, match="unknown storage 'coo'; expected one of dense, csr"):
        StorageAttr("coo")


def test_layout_of_and_storage_of() -> None:
    blocked = TensorType(f32, [1, 3, 8, 8], LayoutAttr("NCHW8c"))
    csr = TensorType(f32, [4, 4], StorageAttr("csr"))
    plain = TensorType(f32, [4, 4])
    assert layout_of(blocked) == LayoutSpec.parse("NCHW8c")
    assert layout_of(plain) is None and layout_of(csr) is None
    assert storage_of(csr) == "csr"
    assert storage_of(plain) == "dense" and storage_of(blocked) == "dense"


def test_verify_encoding() -> None:
    verify_encoding(TensorType(f32, [1, 3, 8, 8], LayoutAttr("NCHW8c")), "x")
    verify_encoding(TensorType(f32, [4, 4], StorageAttr("csr")), "x")
    with pytest.raises(
        VerifyException, match="^x: layout 'NCHW8c' has 4 axes but the tensor has rank 2$"
    ):
        verify_encoding(TensorType(f32, [4, 4], LayoutAttr("NCHW8c")), "x")
    with pytest.raises(VerifyException, match="^x: CSR storage needs a 2-D tensor, got rank 1$"):
        verify_encoding(TensorType(f32, [4], StorageAttr("csr")), "x")
    with pytest.raises(VerifyException, match="^x: unknown tensor encoding"):
        verify_encoding(TensorType(f32, [4], IntegerType(8)), "x")


def test_element_bytes() -> None:
    assert element_bytes(f32) == 4
    assert element_bytes(f64) == 8
    assert element_bytes(Float16Type()) == 2
    assert element_bytes(i8) == 1
    assert element_bytes(i1) == 1
    assert element_bytes(IntegerType(32)) == 4
    with pytest.raises(VerifyException, match="unsupported element type"):
        element_bytes(TensorType(f32, [1]))
