"""Dispatch, layout and buffer passes keep program semantics: each program is run before and
after `select-dispatch, insert-layouts, propagate-layouts, fold-constants`, and after the
whole `default-pipeline` (bufferized), on the same inputs, for every target, with channel
padding on and off. The programs are chosen to spring the traps of
padded layouts: f(0) != 0 between convolutions, softmax over channels, -inf pooling borders,
concats of odd channel counts, NaN and Inf inputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import ReorderOp, encoding_name
from nnlayout.dialects.nn import AddOp, ConstantOp
from nnlayout.examples.make_models import ZOO, build
from nnlayout.frontends.onnx import import_model
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.kernels.onednn.binding import available as onednn_available
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter, argument_specs, find_entry
from nnlayout.tools.driver import parse_pipeline, run_pipeline
from nnlayout.transforms import get_all_passes

# oneDNN runs them too where it is installed, with post-ops fused into its convolutions, in
# its own formats and asked for blocked (padded) activations.
TARGETS = [
    "ref",
    "avx2",
    "avx512",
    *(["onednn", "onednn-nchw8c", "onednn-nchw16c"] if onednn_available() else []),
]
LAYOUT_PIPELINE = (
    "select-dispatch{{target={target} padding={padding}}},insert-layouts,"
    "propagate-layouts,fold-constants"
)


DEFAULT_PIPELINE = "default-pipeline{{target={target} padding={padding}}}"


def compile_module(
    module: ModuleOp, target: str, padding: bool, pipeline: str = LAYOUT_PIPELINE
) -> ModuleOp:
    """A copy of `module` compiled by `pipeline` (a template with {target} and {padding}):
    the layout passes by default, or DEFAULT_PIPELINE (bufferized and planned)."""
    compiled = module.clone()
    spec = pipeline.format(target=target, padding=str(padding).lower())
    run_pipeline(parse_pipeline(spec, get_all_passes()), make_context(), compiled)
    return compiled


def random_inputs(module: ModuleOp, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal(spec.shape).astype(spec.dtype)
        for spec in argument_specs(find_entry(module))
    ]


def assert_same(expected: tuple[np.ndarray, ...], actual: tuple[np.ndarray, ...]) -> None:
    for want, got in zip(expected, actual, strict=True):
        assert got.shape == want.shape
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        finite = np.isfinite(want)
        np.testing.assert_array_equal(
            got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)]
        )
        scale = max(float(np.abs(want[finite]).max(initial=0.0)), 1e-30)
        assert float(np.abs(got[finite] - want[finite]).max(initial=0.0)) <= 1e-4 * scale


def check_semantics(
    module: ModuleOp,
    inputs: list[np.ndarray],
    source: Path | None = None,
    targets: list[str] = TARGETS,
    blocks: bool = True,
) -> None:
    """Each target, padding on and off, gives the interpreter's results, through the layout
    passes and the whole pipeline; with `blocks`, some op runs on blocked data."""
    where = None if source is None else str(source)
    expected = Interpreter(module, source_path=where).run(inputs)
    for target in targets:
        for padding in (True, False):
            compiled = compile_module(module, target, padding)
            # The test means nothing if nothing is blocked.
            if blocks and target != "ref" and padding:
                assert any(
                    encoding_name(op.results[0].type) not in ("", "csr")
                    for op in compiled.walk()
                    if kernel_of(op) is not None
                )
            actual = Interpreter(compiled, source_path=where).run(inputs)
            assert_same(expected, actual)
            bufferized = compile_module(module, target, padding, DEFAULT_PIPELINE)
            assert_same(expected, Interpreter(bufferized, source_path=where).run(inputs))


def check_everywhere(module: ModuleOp, inputs: list[np.ndarray], blocks: bool = True) -> None:
    """`check_semantics`, and the generated module of each target's whole pipeline."""
    check_semantics(module, inputs, blocks=blocks)
    expected = Interpreter(module).run(inputs)
    for target in TARGETS:
        planned = compile_module(module, target, True, DEFAULT_PIPELINE)
        assert_same(expected, run_generated(planned, inputs))


CONV = (
    "nn.conv2d {x}, {w} strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : "
    "({xt}, {wt}) -> {yt}"
)


def parse(text: str) -> ModuleOp:
    return parse_module(make_context(), text, "<test>")


# conv(3 -> 5 channels) -> f -> conv(5 -> 7): f(0) != 0 must not leak through the padding lanes.
TRAP_UNARY = """
func.func @f(%x: tensor<2x3x9x9xf32>) -> tensor<2x7x9x9xf32> {{
  %w1 = nn.constant dense<{w1}> : tensor<5x3x3x3xf32>
  %c1 = nn.conv2d %x, %w1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x3x9x9xf32>, tensor<5x3x3x3xf32>) -> tensor<2x5x9x9xf32>
  %f = {unary} %c1 {attributes}: tensor<2x5x9x9xf32>
  %w2 = nn.constant dense<{w2}> : tensor<7x5x3x3xf32>
  %c2 = nn.conv2d %f, %w2 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x5x9x9xf32>, tensor<7x5x3x3xf32>) -> tensor<2x7x9x9xf32>
  func.return %c2 : tensor<2x7x9x9xf32>
}}
"""


def dense(shape: tuple[int, ...], seed: int) -> str:
    """A nested literal of seeded random values, for `dense<...>`."""
    return json.dumps(np.random.default_rng(seed).standard_normal(shape).round(3).tolist())


@pytest.mark.parametrize(
    ("unary", "attributes"),
    [
        ("nn.sigmoid", ""),
        ("nn.exp", ""),
        ("nn.clip", "min 0.5 max 2.0 "),
        ("nn.relu", ""),
        ("nn.tanh", ""),
        ("nn.leaky_relu", "alpha 0.1 "),
    ],
)
def test_nonzero_at_zero_does_not_leak_through_padding(unary: str, attributes: str) -> None:
    module = parse(
        TRAP_UNARY.format(
            unary=unary, attributes=attributes, w1=dense((5, 3, 3, 3), 1), w2=dense((7, 5, 3, 3), 2)
        )
    )
    check_semantics(module, random_inputs(module))


def test_softmax_over_padded_channels() -> None:
    module = parse("""
func.func @f(%x: tensor<1x3x16x16xf32>) -> tensor<1x5x16x16xf32> {
  %w = nn.constant dense<0.3> : tensor<5x3x3x3xf32>
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x16x16xf32>, tensor<5x3x3x3xf32>) -> tensor<1x5x16x16xf32>
  %s = nn.softmax %c axis 1 : tensor<1x5x16x16xf32>
  func.return %s : tensor<1x5x16x16xf32>
}""")
    check_semantics(module, random_inputs(module))


def test_max_pool_borders_are_minus_infinity() -> None:
    module = parse("""
func.func @f(%x: tensor<1x3x16x16xf32>) -> tensor<1x5x8x8xf32> {
  %w = nn.constant dense<-0.3> : tensor<5x3x3x3xf32>
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x16x16xf32>, tensor<5x3x3x3xf32>) -> tensor<1x5x16x16xf32>
  %n = nn.neg %c : tensor<1x5x16x16xf32>
  %a = nn.abs %n : tensor<1x5x16x16xf32>
  %m = nn.neg %a : tensor<1x5x16x16xf32>
  %p = nn.max_pool2d %m kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x5x16x16xf32> -> tensor<1x5x8x8xf32>
  func.return %p : tensor<1x5x8x8xf32>
}""")
    inputs = random_inputs(module)
    expected = Interpreter(module).run(inputs)[0]
    assert (expected < 0).all()  # all-negative data: a zero border would win
    check_semantics(module, inputs)


def test_concat_of_odd_channel_counts_then_conv() -> None:
    module = parse(f"""
func.func @f(%x: tensor<1x4x16x16xf32>) -> tensor<1x6x16x16xf32> {{
  %w1 = nn.constant dense<{dense((5, 4, 3, 3), 3)}> : tensor<5x4x3x3xf32>
  %a = nn.conv2d %x, %w1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x4x16x16xf32>, tensor<5x4x3x3xf32>) -> tensor<1x5x16x16xf32>
  %w2 = nn.constant dense<{dense((3, 4, 3, 3), 4)}> : tensor<3x4x3x3xf32>
  %b = nn.conv2d %x, %w2 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x4x16x16xf32>, tensor<3x4x3x3xf32>) -> tensor<1x3x16x16xf32>
  %cat = nn.concat %a, %b axis 1 : (tensor<1x5x16x16xf32>, tensor<1x3x16x16xf32>) -> tensor<1x8x16x16xf32>
  %s = nn.sigmoid %cat : tensor<1x8x16x16xf32>
  %w3 = nn.constant dense<{dense((6, 8, 3, 3), 5)}> : tensor<6x8x3x3xf32>
  %c = nn.conv2d %s, %w3 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x8x16x16xf32>, tensor<6x8x3x3xf32>) -> tensor<1x6x16x16xf32>
  func.return %c : tensor<1x6x16x16xf32>
}}""")
    check_semantics(module, random_inputs(module))


def test_batch_norm_with_beta_and_residual_div() -> None:
    module = parse(f"""
func.func @f(%x: tensor<1x3x16x16xf32>) -> tensor<1x5x16x16xf32> {{
  %w = nn.constant dense<{dense((5, 3, 3, 3), 6)}> : tensor<5x3x3x3xf32>
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x16x16xf32>, tensor<5x3x3x3xf32>) -> tensor<1x5x16x16xf32>
  %g = nn.constant dense<[1.0, 2.0, 0.5, 1.5, 1.0]> : tensor<5xf32>
  %b = nn.constant dense<[0.5, -0.5, 1.0, 2.0, -1.0]> : tensor<5xf32>
  %m = nn.constant dense<[0.1, 0.2, 0.3, 0.4, 0.5]> : tensor<5xf32>
  %v = nn.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
  %n = nn.batch_norm %c, %g, %b, %m, %v epsilon 1.0e-05 : (tensor<1x5x16x16xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<1x5x16x16xf32>
  %e = nn.exp %n : tensor<1x5x16x16xf32>
  %d = nn.div %n, %e : (tensor<1x5x16x16xf32>, tensor<1x5x16x16xf32>) -> tensor<1x5x16x16xf32>
  %a = nn.add %d, %c : (tensor<1x5x16x16xf32>, tensor<1x5x16x16xf32>) -> tensor<1x5x16x16xf32>
  func.return %a : tensor<1x5x16x16xf32>
}}""")
    check_semantics(module, random_inputs(module))


def test_nan_and_inf_inputs_propagate_exactly() -> None:
    module = parse(
        TRAP_UNARY.format(
            unary="nn.relu", attributes="", w1=dense((5, 3, 3, 3), 7), w2=dense((7, 5, 3, 3), 8)
        )
    )
    inputs = random_inputs(module)
    inputs[0][0, 1, 4, 4] = np.nan
    inputs[0][1, 2, 0, 0] = np.inf
    check_semantics(module, inputs)


SQUEEZE_AND_EXCITATION = """
func.func @f(%x: tensor<2x12x9x9xf32>) -> (tensor<2x12x9x9xf32>, tensor<2x12x9x9xf32>) {{
  %w = nn.constant dense<{w}> : tensor<12x12x3x3xf32>
  %a = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x12x9x9xf32>, tensor<12x12x3x3xf32>) -> tensor<2x12x9x9xf32>
  %g = nn.global_avg_pool %a : tensor<2x12x9x9xf32> -> tensor<2x12x1x1xf32>
  %w1 = nn.constant dense<{w1}> : tensor<4x12x1x1xf32>
  %s1 = nn.conv2d %g, %w1 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<2x12x1x1xf32>, tensor<4x12x1x1xf32>) -> tensor<2x4x1x1xf32>
  %r = nn.relu %s1 : tensor<2x4x1x1xf32>
  %w2 = nn.constant dense<{w2}> : tensor<12x4x1x1xf32>
  %s2 = nn.conv2d %r, %w2 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<2x4x1x1xf32>, tensor<12x4x1x1xf32>) -> tensor<2x12x1x1xf32>
  %scale = nn.sigmoid %s2 : tensor<2x12x1x1xf32>
  %m = nn.mul %scale, %a : (tensor<2x12x1x1xf32>, tensor<2x12x9x9xf32>) -> tensor<2x12x9x9xf32>
  %sub = nn.sub %m, %scale : (tensor<2x12x9x9xf32>, tensor<2x12x1x1xf32>) -> tensor<2x12x9x9xf32>
  %positive = nn.sigmoid %sub : tensor<2x12x9x9xf32>
  %div = nn.div %scale, %positive : (tensor<2x12x1x1xf32>, tensor<2x12x9x9xf32>) -> tensor<2x12x9x9xf32>
  %mask = nn.global_avg_pool %x : tensor<2x12x9x9xf32> -> tensor<2x12x1x1xf32>
  %spatial = nn.constant dense<{spatial}> : tensor<1x1x9x9xf32>
  %att = nn.mul %m, %spatial : (tensor<2x12x9x9xf32>, tensor<1x1x9x9xf32>) -> tensor<2x12x9x9xf32>
  %y = nn.add %att, %mask : (tensor<2x12x9x9xf32>, tensor<2x12x1x1xf32>) -> tensor<2x12x9x9xf32>
  %w3 = nn.constant dense<{w3}> : tensor<12x12x3x3xf32>
  %z = nn.conv2d %y, %w3 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x12x9x9xf32>, tensor<12x12x3x3xf32>) -> tensor<2x12x9x9xf32>
  func.return %z, %div : tensor<2x12x9x9xf32>, tensor<2x12x9x9xf32>
}}"""


def test_broadcasting_binary_ops() -> None:
    """Squeeze-and-excitation (scale [N, C, 1, 1] * x, as torchvision writes it), a
    broadcast subtrahend and divisor, a spatial [1, 1, H, W] mask over 12 channels (padded
    in 8- and 16-channel blocks, where that broadcast axis is blocked) and a per-channel add:
    the same results on every target, through the interpreter and the generated module."""
    module = parse(
        SQUEEZE_AND_EXCITATION.format(
            w=dense((12, 12, 3, 3), 1),
            w1=dense((4, 12, 1, 1), 2),
            w2=dense((12, 4, 1, 1), 3),
            spatial=dense((1, 1, 9, 9), 4),
            w3=dense((12, 12, 3, 3), 5),
        )
    )
    check_everywhere(module, random_inputs(module))


# Hand-written layouts that block an axis a kernel taking any layout pools or broadcasts:
# dispatch must ask the kernel about the layout the operand already has (it picked mul_any
# and global_avg_pool_any, whose results then mixed padding into real values).
BROADCAST_IN_LAYOUT = """
func.func @f(%x: tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32> {{
  %c = nn.constant dense<{value}> : tensor<{small}xf32>
  %0 = layout.reorder %x : tensor<1x3x5x5xf32> -> tensor<1x3x5x5xf32, {layout}>
  %1 = layout.reorder %c : tensor<{small}xf32> -> tensor<{small}xf32, {layout}>
  %m = nn.mul %0, %1 : (tensor<1x3x5x5xf32, {layout}>, tensor<{small}xf32, {layout}>) -> tensor<1x3x5x5xf32, {layout}>
  %r = layout.reorder %m : tensor<1x3x5x5xf32, {layout}> -> tensor<1x3x5x5xf32>
  func.return %r : tensor<1x3x5x5xf32>
}}"""
POOLING_IN_LAYOUT = """
func.func @f(%x: tensor<1x3x5x5xf32>) -> tensor<1x3x1x1xf32> {{
  %0 = layout.reorder %x : tensor<1x3x5x5xf32> -> tensor<1x3x5x5xf32, {layout}>
  %s = nn.sigmoid %0 : tensor<1x3x5x5xf32, {layout}>
  %p = nn.max_pool2d %s kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x3x5x5xf32, {layout}> -> tensor<1x3x3x3xf32, {layout}>
  %a = nn.avg_pool2d %p kernel [2, 2] strides [1, 1] pads [1, 1, 0, 0] dilations [1, 1] count_include_pad : tensor<1x3x3x3xf32, {layout}> -> tensor<1x3x3x3xf32, {layout}>
  %g = nn.global_avg_pool %a : tensor<1x3x3x3xf32, {layout}> -> tensor<1x3x1x1xf32, {layout}>
  %r = layout.reorder %g : tensor<1x3x1x1xf32, {layout}> -> tensor<1x3x1x1xf32>
  func.return %r : tensor<1x3x1x1xf32>
}}"""
HAND_WRITTEN_LAYOUTS = {
    # a [1, 1, H, W] mask with its broadcast channel axis in blocks of 8
    "mask_in_channel_blocks": BROADCAST_IN_LAYOUT.format(
        value="2.0", small="1x1x5x5", layout='#layout.layout<"NCHW8c">'
    ),
    # a [1, C, 1, 1] scale with its broadcast row axis in blocks of 4
    "scale_in_row_blocks": BROADCAST_IN_LAYOUT.format(
        value="[[[[2.0]], [[3.0]], [[4.0]]]]", small="1x3x1x1", layout='#layout.layout<"NCHW4h">'
    ),
    "pooling_spatial_blocks": POOLING_IN_LAYOUT.format(layout='#layout.layout<"NCHW4h2w">'),
}


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN_LAYOUTS))
def test_hand_written_layouts_blocking_a_pooled_or_broadcast_axis(name: str) -> None:
    module = parse(HAND_WRITTEN_LAYOUTS[name])
    check_everywhere(module, random_inputs(module), blocks=False)  # ref kernels may run all


def test_star_kernel_operands_typed_in_two_layouts_meet_in_operand_0s() -> None:
    """A `"*"` kernel read a hand-typed NHWC operand beside an NCHW8c one: the runtime fell
    back to the reference kernel (or, for an `#nn.kernel` listing both layouts, read NHWC as
    NCHW8c). insert-layouts now reorders it into operand 0's layout."""
    module = parse("""
func.func @f(%x: tensor<1x12x4x4xf32>, %z: tensor<1x12x4x4xf32>) -> tensor<1x12x4x4xf32> {
  %a = layout.reorder %x : tensor<1x12x4x4xf32> -> tensor<1x12x4x4xf32, #layout.layout<"NCHW8c">>
  %b = layout.reorder %z : tensor<1x12x4x4xf32> -> tensor<1x12x4x4xf32, #layout.layout<"NHWC">>
  %y = nn.sigmoid %a : tensor<1x12x4x4xf32, #layout.layout<"NCHW8c">>
  %s = nn.add %y, %b : (tensor<1x12x4x4xf32, #layout.layout<"NCHW8c">>, tensor<1x12x4x4xf32, #layout.layout<"NHWC">>) -> tensor<1x12x4x4xf32, #layout.layout<"NCHW8c">>
  %r = layout.reorder %s : tensor<1x12x4x4xf32, #layout.layout<"NCHW8c">> -> tensor<1x12x4x4xf32>
  func.return %r : tensor<1x12x4x4xf32>
}""")
    check_everywhere(module, random_inputs(module), blocks=False)
    for target in ("avx2", "onednn"):
        if target not in TARGETS:
            continue
        add = next(
            op for op in compile_module(module, target, True).walk() if isinstance(op, AddOp)
        )
        assert kernel_of(add).kernel_name.data != "add_ref"
        assert {encoding_name(v.type) for v in (*add.operands, *add.results)} == {"NCHW8c"}


def activation_reorders(module: ModuleOp) -> int:
    return sum(
        isinstance(op, ReorderOp) and not isinstance(op.input.owner, ConstantOp)
        for op in module.walk()
    )


@pytest.mark.parametrize("name", sorted(ZOO))
def test_small_zoo_models_keep_their_results(name: str) -> None:
    module = import_model(build(name, small=True), inline_limit=1 << 30).module
    check_semantics(module, random_inputs(module), targets=["avx2", "avx512"])


def test_small_resnet_has_one_activation_reorder() -> None:
    """The stem reads the plain image (3 channels padded to a block would multiply its work),
    so the only reorder is the classifier's, back to plain."""
    module = import_model(build("resnet50", small=True), inline_limit=1 << 30).module
    for target in ("avx2", "avx512"):
        compiled = compile_module(module, target, padding=True)
        assert activation_reorders(compiled) == 1
        convs = [op for op in compiled.walk() if op.name == "nn.conv2d"]
        assert all(kernel_of(op).kernel_name.data == "conv2d_nchwc" for op in convs)
        assert not any(
            isinstance(op, ReorderOp) and isinstance(op.input.owner, ConstantOp)
            for op in compiled.walk()
        )
        assert all(
            encoding_name(op.output.type)
            for op in compiled.walk()
            if isinstance(op, ConstantOp)
            and op.output.type.get_shape()[0] > 8
            and len(op.output.type.get_shape()) == 4
        )
