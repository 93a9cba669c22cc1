"""oneDNN's nn.qmul of an image by one value per channel (kernels/onednn/quantized_gate.py:
squeeze-and-excitation gates) against the reference kernel: within one step, any zero points,
the gate on either side, clamped or not; bound once, it reads the gate anew on every run; what
it refuses is named; pipelines choose it and agree with the reference on every target."""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerType
from xdsl.rewriter import Rewriter
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.dialects.layout import LayoutSpec
from nnlayout.dialects.nn.base import ui8
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.providers import registry
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.registry import BindingRefused
from nnlayout.kernels.targets import get_target
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    chosen_kernels,
    compile_module,
    everywhere,
    parse,
    tensor,
)

pytestmark = pytest.mark.onednn
i8 = IntegerType(8)
NHWC = LayoutSpec.parse("NHWC")
IMAGE, GATE = (1, 24, 7, 9), (1, 24, 1, 1)
ZEROS = {"u8": (131, 3, 120), "s8": (-7, 11, 4)}
CLAMPS = {"u8": (125, 200), "s8": (-5, 60)}


def gate_mul(
    kind: str, gate_first: bool, clamped: bool, layout: str = "", images: int = 1
) -> nn.QMulOp:
    """IMAGE times GATE (or GATE times IMAGE), for `images` images, typed in `layout`."""
    element_type = ui8 if kind == "u8" else i8
    image, gate = (images, *IMAGE[1:]), (images, *GATE[1:])
    shapes = (gate, image) if gate_first else (image, gate)
    op = nn.QMulOp(
        *(create_ssa_value(tensor(s, layout, element_type)) for s in shapes),
        tuple(
            nn.QParams.make(scale, z, element_type)
            for scale, z in zip((0.05, 0.011, 0.03), ZEROS[kind], strict=True)
        ),
        CLAMPS[kind] if clamped else (None, None),
    )
    if layout:
        Rewriter.replace_value_with_new_type(op.output, tensor(image, layout, element_type))
    return op


def _data(kind: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    info = np.iinfo(np.uint8 if kind == "u8" else np.int8)
    rng = np.random.default_rng(seed)
    return rng.integers(info.min, info.max + 1, shape).astype(info.dtype)


CASES = [(k, g, c) for k in ("u8", "s8") for g in (False, True) for c in (False, True)]
IDS = [f"{k}-{'gate-first' if g else 'gate-second'}{'-clamped' if c else ''}" for k, g, c in CASES]


@pytest.mark.parametrize("images", [1, 3], ids=["one-image", "three-images"])
@pytest.mark.parametrize(("kind", "gate_first", "clamped"), CASES, ids=IDS)
def test_the_gate_kernel_computes_the_reference(kind, gate_first, clamped, images) -> None:
    """Each image times its own gate (more than one: one oneDNN call per image)."""
    plain = gate_mul(kind, gate_first, clamped, images=images)
    typed = gate_mul(kind, gate_first, clamped, "NHWC", images)
    image = (images, *IMAGE[1:])
    chosen = registry().select(typed, get_target("onednn"), True)
    assert chosen is not None and chosen.kernel.name == "qmul_gate_onednn", chosen
    kernel = registry().lookup("qmul_gate_onednn")
    shapes = [v.type.get_shape() for v in plain.operands]
    bound = kernel.prepare(typed, None)
    inputs = [_data(kind, s, seed) for seed, s in enumerate(shapes)]
    packed = [NHWC.pack(x) for x in inputs]
    want = REFERENCE_KERNELS[nn.QMulOp](plain, inputs)
    out = np.empty(NHWC.physical_shape(image), want.dtype)
    run = bound.on(packed, out)
    for seed in range(3):  # new gate values in the same buffer: the bound call reads them
        gate = 0 if gate_first else 1
        packed[gate][...] = NHWC.pack(_data(kind, shapes[gate], 10 + seed))
        inputs[gate] = NHWC.unpack(packed[gate], shapes[gate])
        want = REFERENCE_KERNELS[nn.QMulOp](plain, inputs)
        run()
        got = NHWC.unpack(out, image)
        assert np.abs(got.astype(int) - want.astype(int)).max() <= 1
        assert np.mean(got != want) < 1e-2
        called = NHWC.unpack(kernel.impl(typed, packed), image)
        np.testing.assert_array_equal(called, got)
    if clamped:  # the clamp bites at both ends
        assert (got.min(), got.max()) == CLAMPS[kind]


def test_what_the_gate_kernel_refuses_is_named() -> None:
    """It applies to an image times a gate only; it refuses an image and result of two types,
    and binding refuses values laid out otherwise than NHWC (hand-written IR), naming each."""
    kernel, onednn = registry().lookup("qmul_gate_onednn"), get_target("onednn")
    same = nn.QMulOp(
        *(create_ssa_value(tensor(IMAGE, "", ui8)) for _ in range(2)),
        tuple(nn.QParams.make(0.1, 3, ui8) for _ in range(3)),
    )
    assert not kernel.applies(same)
    assert registry().select(same, onednn, True).rejected[-1][0] != "qmul_gate_onednn"
    mixed = gate_mul("u8", False, False, "NHWC")
    Rewriter.replace_value_with_new_type(mixed.output, tensor(IMAGE, "NHWC", i8))
    reason = kernel.refusal(mixed, onednn, True)
    assert reason == "the image and the result are not of one 8-bit type"
    for layout in ("", "NCHW16c"):
        op = gate_mul("u8", False, False, layout)
        reason = f"the image is {layout or 'plain'}; the kernel takes NHWC"
        assert kernel.binding_refusal(op) == reason
        with pytest.raises(BindingRefused, match=reason):
            kernel.prepare(op, None)


def _program(kind: str, images: int) -> str:
    """`images` images times their per-channel gates (a global pool of the image, as
    squeeze-and-excitation computes it before its convolutions), both quantized with zero
    points != 0."""
    t = "ui8" if kind == "u8" else "i8"
    a, g, y = ZEROS[kind]

    def q(prefix: str, scale: float, zero: int) -> str:
        tensor = f"tensor<{t}>"
        scale_attr = f"{prefix}_scale = dense<{scale}> : tensor<f32>"
        return f"{scale_attr}, {prefix}_zero_point = dense<{zero}> : {tensor}"

    image, gate = f"tensor<{images}x20x6x5x{t}>", f"tensor<{images}x20x1x1x{t}>"
    return (
        f"func.func @main(%x: tensor<{images}x20x6x5xf32>) -> tensor<{images}x20x6x5xf32> {{\n"
        f"  %a = nn.quantize %x {{{q('y', 0.05, a)}}} : tensor<{images}x20x6x5xf32> -> {image}\n"
        f"  %p = nn.global_avg_pool %x : tensor<{images}x20x6x5xf32> -> tensor<{images}x20x1x1xf32>\n"
        f"  %g = nn.quantize %p {{{q('y', 0.011, g)}}} : tensor<{images}x20x1x1xf32> -> {gate}\n"
        f"  %m = nn.qmul %a, %g {{{q('a', 0.05, a)}, {q('b', 0.011, g)}, {q('y', 0.03, y)}}}"
        f" : ({image}, {gate}) -> {image}\n"
        f"  %d = nn.dequantize %m {{{q('x', 0.03, y)}}} : {image} -> tensor<{images}x20x6x5xf32>\n"
        f"  func.return %d : tensor<{images}x20x6x5xf32>\n}}\n"
    )


@pytest.mark.parametrize(("kind", "images"), [("u8", 1), ("s8", 1), ("u8", 2)])
def test_gate_pipelines_give_the_references_results_on_every_target(kind, images) -> None:
    module = parse(_program(kind, images))
    x = np.random.default_rng(4).standard_normal((images, 20, 6, 5)).astype(np.float32) + 0.5
    want = Interpreter(compile_module(module, "ref", False, DEFAULT_PIPELINE)).run([x])[0]
    chosen = set()
    for target, padding, compiled, got in everywhere(module, [x]):
        chosen |= chosen_kernels(compiled, nn.QMulOp)
        assert np.abs(got[0] - want).max() <= 0.03 * 1.001, (target, padding)
        assert np.mean(got[0] != want) < 0.02
    assert ("qmul_gate_onednn" in chosen) == b.available(), chosen


@pytest.mark.parametrize(
    ("image", "gate"),
    [
        ((1, 5, 7, 24), (1, 1, 1, 24)),
        ((1, 24, 7, 9), (24, 1, 1)),
        ((2, 6, 24), (6, 1)),
        ((2, 3, 1, 5), (1, 3, 1, 5)),
    ],
    ids=["channels-last-layer-scale", "rank-3-per-channel", "middle-axis", "size-1-axis"],
)
def test_a_broadcast_gate_runs_plain_in_one_call(
    image: tuple[int, ...], gate: tuple[int, ...]
) -> None:
    """ConvNeXt's layer scale: [1, 1, 1, C] against channels-last [1, H, W, C] data (and
    [C, 1, 1] against [1, C, H, W], a middle axis of rank 3): plain operands, the gate's
    axes other than 1 one run (a per-channel broadcast for oneDNN); within one step of the
    reference, with new gate values in the same buffer read by the bound call."""
    params = tuple(
        nn.QParams.make(scale, z, ui8)
        for scale, z in zip((0.05, 0.011, 0.03), ZEROS["u8"], strict=True)
    )
    op = nn.QMulOp(*(create_ssa_value(tensor(s, "", ui8)) for s in (image, gate)), params)
    chosen = registry().select(op, get_target("onednn"), True)
    assert chosen is not None and chosen.kernel.name == "qmul_gate_onednn", chosen
    assert chosen.kernel.operand_and_result_layouts(op, get_target("onednn")) == (
        ("", ""),
        ("",),
    )
    inputs = [_data("u8", image, 0), _data("u8", gate, 1)]
    out = np.empty(image, np.uint8)
    bound = chosen.kernel.prepare(op, None)
    owned = bound.factors.nbytes + bound.shift.nbytes  # the kernel's, counted by the plan
    assert chosen.kernel.workspace(op, get_target("onednn")) >= owned == 8 * math.prod(gate)
    run = bound.on(inputs, out)
    for seed in range(2):
        inputs[1][...] = _data("u8", gate, 10 + seed)
        run()
        want = REFERENCE_KERNELS[nn.QMulOp](op, inputs)
        assert np.abs(out.astype(int) - want.astype(int)).max() <= 1
        assert np.mean(out != want) < 1e-2
