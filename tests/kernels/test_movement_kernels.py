"""The data-movement kernels: the reference resize against onnx's reference evaluator and
onnxruntime over ONNX's modes; the blocked family's slice, pad, resize, channel shuffle and
concat on packed 20-channel data (off both blocks; and in NHWC and NCHW) against the
reference, padding lanes exactly zero, prepared into strided destinations; oneDNN's choice of the
resizes its resampling computes exactly; transpose as oneDNN's reorder."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from nnlayout.dialects import nn
from nnlayout.dialects.layout import LayoutSpec
from nnlayout.frontends.onnx import import_model
from nnlayout.kernels.onednn.binding import available as onednn_available
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import AVX2, KERNELS, build_in_layouts, onnxruntime_outputs

RNG = np.random.default_rng(7)


# ------------------------------------------------------------ resize, ONNX's formulas
def _resize_model(attrs: dict, scales: list[float] | None, sizes: list[int] | None):
    inits = {}
    inputs = ["x", "", "", ""]
    if scales is not None:
        inits["scales"] = np.array(scales, np.float32)
        inputs[2] = "scales"
    if sizes is not None:
        inits["sizes"] = np.array(sizes, np.int64)
        inputs[3] = "sizes"
    graph = helper.make_graph(
        [helper.make_node("Resize", inputs, ["y"], **attrs)],
        "resize",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


COORDINATES = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
               "half_pixel_symmetric"]  # fmt: skip
TARGETS = [
    ([1, 1, 2.0, 3.0], None),
    ([1, 1, 0.5, 0.6], None),
    ([1, 1, 1.7, 0.8], None),
    (None, [1, 2, 7, 3]),
    (None, [1, 2, 1, 9]),
]
CASES = [
    *(("linear", c, "round_prefer_floor") for c in COORDINATES),
    *(
        ("nearest", c, n)
        for c, n in itertools.product(
            COORDINATES,
            ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"],
        )
    ),
]


# Where onnxruntime computes a coordinate in float32 and onnx's evaluator (and we) in float64
# from the float32 scale (0.6f, 1.7f, 0.8f; 3 / 5 from sizes), a coordinate that is an
# integer in exact arithmetic falls on either side of it and nearest rounding (or
# align_corners' unrounded length) picks another pixel. onnx's stored node outputs come
# from its evaluator.
RUNTIME_DIFFERS = {
    ("linear", "align_corners", "round_prefer_floor", 2),
    ("nearest", "half_pixel", "floor", 1),
    ("nearest", "pytorch_half_pixel", "floor", 1),
    ("nearest", "align_corners", "floor", 1),
    ("nearest", "align_corners", "floor", 2),
    ("nearest", "asymmetric", "round_prefer_ceil", 2),
    ("nearest", "half_pixel_symmetric", "floor", 1),
    ("nearest", "half_pixel_symmetric", "floor", 3),
}


@pytest.mark.parametrize("target", range(len(TARGETS)))
@pytest.mark.parametrize(("mode", "coordinates", "nearest"), CASES)
def test_reference_resize_is_onnx(mode: str, coordinates: str, nearest: str, target: int) -> None:
    """Our reference kernel gives onnx's reference evaluator's results; onnxruntime's too,
    except in the cases of RUNTIME_DIFFERS (and there only)."""
    scales, sizes = TARGETS[target]
    attrs = {"mode": mode, "coordinate_transformation_mode": coordinates, "nearest_mode": nearest}
    model = _resize_model(attrs, scales, sizes)
    x = RNG.standard_normal((1, 2, 4, 5)).astype(np.float32)
    ours = Interpreter(import_model(model).module).run([x])[0]
    evaluator = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_allclose(ours, evaluator, rtol=0, atol=1e-6)
    runtime = onnxruntime_outputs(model, [x])[0]
    if not np.allclose(runtime, evaluator, rtol=0, atol=1e-6):
        assert (mode, coordinates, nearest, target) in RUNTIME_DIFFERS
    else:
        assert (mode, coordinates, nearest, target) not in RUNTIME_DIFFERS


# ------------------------------------------------------------ blocked kernels
LAYOUTS = ["NCHW8c", "NCHW16c", "NHWC", "NCHW"]
OPS = {
    "slice_any": lambda x: nn.SliceOp(x, [1, 3, 1, 4], [1, 9, 3, 2], [1, 2, 1, -2]),
    "slice_aligned": lambda x: nn.SliceOp(x, [0, 8, 0, 0], [2, 5, 4, 5]),
    "slice_shifted": lambda x: nn.SliceOp(x, [0, 3, 1, 0], [2, 13, 2, 5]),
    "slice_tail": lambda x: nn.SliceOp(x, [0, 11, 0, 0], [2, 9, 4, 5]),
    "pad_constant": lambda x: nn.PadOp(x, [0, 0, 1, 2, 0, 0, 2, 0], "constant", 1.5),
    "pad_reflect": lambda x: nn.PadOp(x, [0, 0, 2, 1, 0, 0, 1, 3], "reflect"),
    "pad_edge": lambda x: nn.PadOp(x, [0, 0, 2, 1, 0, 0, 1, 3], "edge"),
    "resize_linear": lambda x: nn.ResizeOp(x, [7, 9], [1.75, 1.8], "linear"),
    "resize_nearest": lambda x: nn.ResizeOp(x, [3, 10], [0.75, 2.0], "nearest", "asymmetric"),
    "channel_shuffle_any": lambda x: nn.ChannelShuffleOp(x, 4),
}


def _kernel_name(case: str) -> str:
    return case if case.endswith("_any") else case.split("_")[0] + "_any"


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", OPS)
def test_blocked_movement_kernel(case: str, layout: str) -> None:
    x = RNG.standard_normal((2, 20, 4, 5)).astype(np.float32)
    name = _kernel_name(case)
    op, packed, result_layout = build_in_layouts(name, AVX2, OPS[case], [x], any_layout=layout)
    want = REFERENCE_KERNELS[type(op)](op, [x])
    got = KERNELS[name].impl(op, packed)
    spec = LayoutSpec.parse(result_layout)
    shape = nn.shape_of(op.results[0])
    np.testing.assert_array_equal(spec.unpack(got, shape), want)
    assert not got[spec.padding_mask(shape)].any(), "padding lanes must stay zero"


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(
    "case", ["slice_any", "slice_aligned", "slice_shifted", "channel_shuffle_any"]
)
def test_prepared_movement_kernel_writes_a_strided_destination(case: str, layout: str) -> None:
    """Prepared, the kernel writes the unprepared one's bits into a strided view (a planned
    buffer's), padding lanes included, over a destination full of NaN."""
    x = RNG.standard_normal((2, 20, 4, 5)).astype(np.float32)
    name = _kernel_name(case)
    op, packed, _ = build_in_layouts(name, AVX2, OPS[case], [x], any_layout=layout)
    want = KERNELS[name].impl(op, packed)
    room = np.full((*want.shape[:-1], want.shape[-1] * 2), np.nan, np.float32)
    out = room[..., ::2]
    KERNELS[name].prepare(op, None)(packed, out)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_blocked_concat_off_the_block(layout: str) -> None:
    """ShuffleNet's halves: 10 + 7 + 3 channels, each off the block; 2 + 18 (the second
    spans blocks of 8 and of 16)."""
    for counts in ((10, 7, 3), (2, 18)):
        _check_concat(layout, counts)


def _check_concat(layout: str, counts: tuple[int, ...]) -> None:
    arrays = [RNG.standard_normal((1, c, 3, 4)).astype(np.float32) for c in counts]
    op, packed, result_layout = build_in_layouts(
        "concat_any", AVX2, lambda *xs: nn.ConcatOp(xs, 1), arrays, any_layout=layout
    )
    got = KERNELS["concat_any"].impl(op, packed)
    spec = LayoutSpec.parse(result_layout)
    np.testing.assert_array_equal(spec.unpack(got, (1, 20, 3, 4)), np.concatenate(arrays, 1))
    assert not got[spec.padding_mask((1, 20, 3, 4))].any()
    out = np.full(got.shape, np.nan, np.float32)
    KERNELS["concat_any"].prepare(op, None)(packed, out)
    np.testing.assert_array_equal(out, got)


def test_pad_of_channels_is_refused_by_pad_any() -> None:
    x = np.zeros((1, 20, 4, 5), np.float32)
    op, _, _ = build_in_layouts(
        "pad_any", AVX2, lambda v: nn.PadOp(v, [0, 1, 0, 0, 0, 0, 0, 0]), [x], any_layout=""
    )
    assert "pad the N or C axis" in KERNELS["pad_any"].refusal(op, AVX2, True)


# ------------------------------------------------------------ oneDNN's resampling
@pytest.mark.skipif(not onednn_available(), reason="oneDNN does not load here")
@pytest.mark.parametrize(
    ("mode", "coordinates", "nearest", "out", "takes"),
    [
        ("linear", "half_pixel", "floor", (8, 10), True),
        ("linear", "pytorch_half_pixel", "floor", (7, 3), True),
        ("linear", "pytorch_half_pixel", "floor", (1, 3), False),  # length 1: x = -0.5... 0
        ("linear", "align_corners", "floor", (8, 10), False),
        ("linear", "asymmetric", "floor", (8, 10), False),
        ("nearest", "asymmetric", "floor", (8, 15), True),  # whole factors
        ("nearest", "asymmetric", "floor", (6, 7), False),
        ("nearest", "half_pixel", "round_prefer_ceil", (6, 7), True),
    ],
)
def test_onednn_resampling_takes_exact_modes(
    mode: str, coordinates: str, nearest: str, out: tuple[int, int], takes: bool
) -> None:
    from nnlayout.kernels.onednn.movement import movement_reason
    from nnlayout.kernels.providers import registry

    x = np.zeros((1, 20, 4, 5), np.float32)
    scales = (out[0] / 4, out[1] / 5)
    op, _, _ = build_in_layouts(
        "resize_any",
        AVX2,
        lambda v: nn.ResizeOp(v, out, scales, mode, coordinates, nearest),
        [x],
        any_layout="",
    )
    assert (movement_reason(op) is None) == takes
    kernel = registry().lookup("resize_onednn")
    if takes:
        data = RNG.standard_normal(x.shape).astype(np.float32)
        got = kernel.impl(op, [data])
        np.testing.assert_allclose(got, REFERENCE_KERNELS[nn.ResizeOp](op, [data]), atol=1e-5)


# ------------------------------------------------------------ transpose as oneDNN's reorder
@pytest.mark.skipif(not onednn_available(), reason="oneDNN is not available")
@pytest.mark.parametrize(
    ("shape", "perm"),
    [
        ((3, 5), (1, 0)),
        ((2, 3, 5), (0, 2, 1)),  # a ViT's [N, T, D] <-> [N, D, T]
        ((2, 5, 3, 4), (0, 2, 3, 1)),  # ConvNeXt's NCHW -> NHWC
        ((2, 3, 4, 5), (0, 3, 1, 2)),  # and back
        ((2, 3, 2, 5, 3), (4, 2, 0, 1, 3)),
    ],
)
def test_transpose_runs_as_a_onednn_reorder(shape: tuple[int, ...], perm: tuple[int, ...]) -> None:
    """Exactly np.transpose, NaN, infinities and signed zeros included, through the
    interpreter and the generated module on each oneDNN target."""
    from nnlayout.dialects.kernel_attr import kernel_of
    from nnlayout.lowering.to_numpy import run_generated
    from nnlayout.tests.helpers import DEFAULT_PIPELINE, compile_module, parse, same_bits

    out = tuple(shape[axis] for axis in perm)
    t = "x".join(map(str, shape))
    r = "x".join(map(str, out))
    module = parse(f"""
func.func @f(%x: tensor<{t}xf32>) -> tensor<{r}xf32> {{
  %y = nn.transpose %x perm {list(perm)} : tensor<{t}xf32> -> tensor<{r}xf32>
  func.return %y : tensor<{r}xf32>
}}""")
    x = RNG.standard_normal(shape).astype(np.float32)
    x.reshape(-1)[:4] = [np.nan, -0.0, np.inf, -np.inf]
    want = np.transpose(x, perm)
    for target in ("onednn", "onednn-nchw16c", "host"):
        planned = compile_module(module, target, True, DEFAULT_PIPELINE)
        chosen = [kernel_of(op).kernel_name.data for op in planned.walk() if kernel_of(op)]
        assert chosen == ["transpose_onednn"], (target, chosen)
        (interpreted,) = Interpreter(planned).run([x])
        (generated,) = run_generated(planned, [x])
        same_bits(interpreted, want)
        same_bits(generated, want)


@pytest.mark.parametrize("element_type", ["ui8", "i8"])
def test_transpose_moves_integer_data_in_onednn(element_type: str) -> None:
    """u8 and s8 (a quantized transformer's attention heads): oneDNN's reorder moves them
    as it moves f32, exactly np.transpose, through the interpreter and the generated module."""
    from nnlayout.dialects.kernel_attr import kernel_of
    from nnlayout.lowering.to_numpy import run_generated
    from nnlayout.tests.helpers import DEFAULT_PIPELINE, compile_module, parse

    module = parse(f"""
func.func @f(%x: tensor<2x197x12x64x{element_type}>) -> tensor<2x12x197x64x{element_type}> {{
  %y = nn.transpose %x perm [0, 2, 1, 3] : tensor<2x197x12x64x{element_type}> -> tensor<2x12x197x64x{element_type}>
  func.return %y : tensor<2x12x197x64x{element_type}>
}}""")
    dtype = np.uint8 if element_type == "ui8" else np.int8
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max + 1, (2, 197, 12, 64)).astype(dtype)
    want = np.transpose(x, (0, 2, 1, 3))
    for target in ("onednn", "host"):
        planned = compile_module(module, target, True, DEFAULT_PIPELINE)
        chosen = [kernel_of(op).kernel_name.data for op in planned.walk() if kernel_of(op)]
        assert chosen == ["transpose_onednn"], (target, chosen)
        for (got,) in (Interpreter(planned).run([x]), run_generated(planned, [x])):
            assert got.dtype == dtype
            np.testing.assert_array_equal(got, want)
