"""Data movement as oneDNN's reorder between strided descriptors, exactly (NaN, infinities and
signed zeros included): slices of a strided window (slicing.py) and channel shuffles
(`channel_shuffle_reorder_onednn`), on plain and NHWC data, through the kernels and through
the whole pipeline (interpreter and generated module)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import i8
from xdsl.ir import Block
from xdsl.rewriter import Rewriter

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import LayoutSpec
from nnlayout.kernels.onednn.binding import available as onednn_available
from nnlayout.kernels.reference_movement import channel_shuffle
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import DEFAULT_PIPELINE, compile_module, parse, same_bits, tensor

pytestmark = pytest.mark.skipif(not onednn_available(), reason="oneDNN is not available")
RNG = np.random.default_rng(26)


def _special(*shape: int) -> np.ndarray:
    x = RNG.standard_normal(shape).astype(np.float32)
    x.reshape(-1)[:4] = [np.nan, -0.0, np.inf, -np.inf]
    x.reshape(-1)[-1] = -0.0
    return x


def _window(starts: tuple[int, ...], sizes: tuple[int, ...], steps: tuple[int, ...]) -> tuple:
    return tuple(slice(a, a + n * k, k) for a, n, k in zip(starts, sizes, steps, strict=True))


SLICES = [
    ((12,), (3,), (4,), (2,)),
    ((1, 7, 12), (0, 0, 4), (1, 7, 4), (1, 1, 1)),  # ViT's k: the middle third of the last axis
    ((2, 5, 6), (1, 1, 0), (1, 3, 3), (1, 1, 2)),
    ((1, 6, 9, 9), (0, 1, 2, 3), (1, 4, 5, 3), (1, 1, 1, 2)),  # a crop
    ((2, 3, 4, 5, 6), (0, 1, 0, 2, 1), (2, 2, 2, 3, 2), (1, 1, 2, 1, 3)),
]


@pytest.mark.parametrize(("shape", "starts", "sizes", "steps"), SLICES)
def test_slice_of_a_strided_window_runs_as_a_onednn_reorder(
    shape: tuple[int, ...], starts: tuple[int, ...], sizes: tuple[int, ...], steps: tuple[int, ...]
) -> None:
    """The slice is returned (no view): slice_onednn copies its window, exactly."""
    t, r = "x".join(map(str, shape)), "x".join(map(str, sizes))
    module = parse(f"""
func.func @f(%x: tensor<{t}xf32>) -> tensor<{r}xf32> {{
  %y = nn.slice %x starts {list(starts)} sizes {list(sizes)} steps {list(steps)} : tensor<{t}xf32> -> tensor<{r}xf32>
  func.return %y : tensor<{r}xf32>
}}""")
    x = _special(*shape)
    want = np.ascontiguousarray(x[_window(starts, sizes, steps)])
    for target in ("onednn", "host"):
        planned = compile_module(module, target, True, DEFAULT_PIPELINE)
        chosen = [kernel_of(op).kernel_name.data for op in planned.walk() if kernel_of(op)]
        assert chosen == ["slice_onednn"], (target, chosen)
        same_bits(Interpreter(planned).run([x])[0], want)
        same_bits(run_generated(planned, [x])[0], want)


def test_slice_reads_and_writes_nhwc_data() -> None:
    """A ShuffleNet split in the convolutions' NHWC layout: the window of channels 3..7."""
    from nnlayout.kernels.onednn.slicing import slice_accepts, slice_run
    from nnlayout.kernels.targets import get_target

    spec = LayoutSpec.parse("NHWC")
    nhwc = '#layout.layout<"NHWC">'
    module = parse(f"""
func.func @f(%x: tensor<1x10x4x3xf32, {nhwc}>) -> tensor<1x5x4x3xf32, {nhwc}> {{
  %y = nn.slice %x starts [0, 3, 0, 0] sizes [1, 5, 4, 3] steps [1, 1, 1, 1] : tensor<1x10x4x3xf32, {nhwc}> -> tensor<1x5x4x3xf32, {nhwc}>
  func.return %y : tensor<1x5x4x3xf32, {nhwc}>
}}""")
    op = next(op for op in module.walk() if isinstance(op, nn.SliceOp))
    x = _special(1, 10, 4, 3)
    assert slice_accepts(op, get_target("onednn"), True) is None
    got = slice_run(op, [spec.pack(x)])
    same_bits(spec.unpack(got, (1, 5, 4, 3)), np.ascontiguousarray(x[:, 3:8]))


@pytest.mark.parametrize("layout", ["", "NHWC"])
@pytest.mark.parametrize(("channels", "groups"), [(12, 2), (12, 3), (20, 4)])
def test_channel_shuffle_runs_as_a_onednn_reorder(layout: str, channels: int, groups: int) -> None:
    from nnlayout.kernels.onednn.prepared import run

    shape = (2, channels, 3, 5)
    block = Block(arg_types=[tensor(shape, layout)])
    op = nn.ChannelShuffleOp(block.args[0], groups)
    x = _special(*shape)
    want = channel_shuffle(op, [x])
    if not layout:
        same_bits(run(op, [x]), want)
        return
    spec = LayoutSpec.parse(layout)
    same_bits(spec.unpack(run(op, [spec.pack(x)]), shape), want)


@pytest.mark.parametrize("element_type", [nn.ui8, i8], ids=["u8", "s8"])
def test_quantized_channel_shuffle_and_slice_move_integers_in_nhwc(element_type) -> None:
    """ShuffleNet's unit quantized: oneDNN's reorder shuffles the u8/s8 bytes in NHWC (the
    int8 kernels' layout, on every target with oneDNN; the blocked family's numpy shuffle
    elsewhere), and the blocked family's slice takes them in NHWC; a layout with padding
    lanes, which would have to hold the data's zero point, is refused for them."""
    from nnlayout.kernels.onednn.prepared import run
    from nnlayout.kernels.providers import registry
    from nnlayout.kernels.targets import get_target

    shape, nhwc = (1, 20, 3, 5), LayoutSpec.parse("NHWC")
    dtype = np.uint8 if element_type == nn.ui8 else np.int8
    x = RNG.integers(np.iinfo(dtype).min, np.iinfo(dtype).max + 1, shape).astype(dtype)
    shuffle = nn.ChannelShuffleOp(Block(arg_types=[tensor(shape, "NHWC", element_type)]).args[0], 4)
    kernels = registry()
    for target, name in (
        ("avx512", "channel_shuffle_any"),
        ("onednn", "channel_shuffle_reorder_onednn"),
        ("host", "channel_shuffle_reorder_onednn"),
    ):
        assert kernels.select(shuffle, get_target(target), True).kernel.name == name, target
    want = channel_shuffle(shuffle, [x])
    np.testing.assert_array_equal(nhwc.unpack(run(shuffle, [nhwc.pack(x)]), shape), want)
    blocked = kernels.lookup("channel_shuffle_any").impl(shuffle, [nhwc.pack(x)])
    np.testing.assert_array_equal(nhwc.unpack(blocked, shape), want)
    arg = Block(arg_types=[tensor(shape, "NHWC", element_type)]).args[0]
    half = nn.SliceOp(arg, (0, 10, 0, 0), (1, 10, 3, 5), (1, 1, 1, 1))
    Rewriter.replace_value_with_new_type(half.output, tensor((1, 10, 3, 5), "NHWC", element_type))
    assert kernels.select(half, get_target("host"), True).kernel.name == "slice_any"
    slice_any = kernels.lookup("slice_any")
    got = nhwc.unpack(slice_any.impl(half, [nhwc.pack(x)]), (1, 10, 3, 5))
    np.testing.assert_array_equal(got, x[:, 10:])
    padded = LayoutSpec.parse("NCHW16c")
    reason = slice_any.accepts_layout(half, padded)
    assert reason == "NCHW16c pads; the padding lanes of quantized data hold its zero point"
