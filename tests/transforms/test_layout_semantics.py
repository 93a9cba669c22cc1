"""Dispatch, layout and buffer passes keep program semantics: each program is run before and
after `select-dispatch, insert-layouts, propagate-layouts, fold-constants`, and after the
whole `default-pipeline` (bufferized), on the same inputs, for every target, with channel
padding on and off. The programs are chosen to spring the traps of
padded layouts: f(0) != 0 between convolutions, softmax over channels, -inf pooling borders,
concats of odd channel counts, NaN and Inf inputs. The first of them run again with every memory
plan checked by verify-memory-plan."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import ReorderOp, encoding_name
from nnlayout.dialects.nn import AddOp, ConstantOp
from nnlayout.examples.make_models import ZOO, build
from nnlayout.frontends.onnx import import_model
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter, find_entry
from nnlayout.runtime.plan_check import verify_function
from nnlayout.tests import helpers
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    LAYOUT_PIPELINE,
    PIPELINE_TARGETS,
    TRAP_UNARY,
    activation_reorders,
    assert_same,
    check_semantics,
    compile_module,
    dense,
    parse,
    random_inputs,
    tiered,
)


def check_everywhere(module: ModuleOp, inputs: list[np.ndarray], blocks: bool = True) -> None:
    """`check_semantics`, and the generated module of each target's whole pipeline."""
    check_semantics(module, inputs, blocks=blocks)
    expected = Interpreter(module).run(inputs)
    for target in PIPELINE_TARGETS:
        planned = compile_module(module, target, True, DEFAULT_PIPELINE)
        assert_same(expected, run_generated(planned, inputs))


@pytest.mark.parametrize(
    ("unary", "attributes"),
    [
        ("nn.sigmoid", ""),
        ("nn.exp", ""),
        ("nn.clip", "min 0.5 max 2.0 "),
        ("nn.relu", ""),
        ("nn.tanh", ""),
        ("nn.leaky_relu", "alpha 0.1 "),
        ("nn.hardsigmoid", "alpha 0.2 beta 0.5 "),  # 0.5 at 0
        ("nn.softplus", ""),  # log 2 at 0
        ("nn.pow", "exponent 0.0 "),  # 1 at 0
        ("nn.hardswish", ""),
        ("nn.gelu", ""),
        ("nn.gelu", 'approximate "tanh" '),
        ("nn.erf", ""),
        ("nn.elu", "alpha 0.5 "),
        ("nn.selu", "alpha 1.6 gamma 1.05 "),
        ("nn.mish", ""),
        ("nn.swish", ""),
        ("nn.pow", "exponent 2.0 "),
    ],
)
def test_nonzero_at_zero_does_not_leak_through_padding(unary: str, attributes: str) -> None:
    module = parse(
        TRAP_UNARY.format(
            unary=unary, attributes=attributes, w1=dense((5, 3, 3, 3), 1), w2=dense((7, 5, 3, 3), 2)
        )
    )
    check_semantics(module, random_inputs(module))


@pytest.mark.parametrize("unary", ["nn.log", "nn.reciprocal", "nn.pow %e exponent -1.0"])
def test_infinite_at_zero_does_not_leak_through_padding(unary: str) -> None:
    """log(0) = -inf, 1 / 0 = inf: padding lanes that kept them would make the next
    convolution's sums NaN (inf * 0). exp first keeps the values away from 0 (exp(0) = 1 in
    the padding lanes is re-zeroed too)."""
    op, _, attributes = unary.partition(" %e ")
    module = parse(f"""
func.func @f(%x: tensor<2x3x9x9xf32>) -> tensor<2x7x9x9xf32> {{
  %w1 = nn.constant dense<{dense((5, 3, 3, 3), 1)}> : tensor<5x3x3x3xf32>
  %c1 = nn.conv2d %x, %w1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x3x9x9xf32>, tensor<5x3x3x3xf32>) -> tensor<2x5x9x9xf32>
  %e = nn.exp %c1 : tensor<2x5x9x9xf32>
  %f = {op} %e {attributes} : tensor<2x5x9x9xf32>
  %w2 = nn.constant dense<{dense((7, 5, 3, 3), 2)}> : tensor<7x5x3x3xf32>
  %c2 = nn.conv2d %f, %w2 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x5x9x9xf32>, tensor<7x5x3x3xf32>) -> tensor<2x7x9x9xf32>
  func.return %c2 : tensor<2x7x9x9xf32>
}}""")
    inputs = [x * np.float32(0.3) for x in random_inputs(module)]  # exp stays well-conditioned
    check_semantics(module, inputs)


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


@pytest.fixture
def verified_plans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The checks above (which run `default-pipeline`, ending with plan-memory) with every
    plan they make checked by verify-memory-plan; the list counts the views checked."""
    original = helpers.compile_module
    checked: list[int] = []

    def compile_and_verify(
        module: ModuleOp, target: str, padding: bool, pipeline: str = LAYOUT_PIPELINE
    ) -> ModuleOp:
        compiled = original(module, target, padding, pipeline)
        if pipeline == DEFAULT_PIPELINE:
            checked.append(verify_function(find_entry(compiled)))
        return compiled

    monkeypatch.setattr(helpers, "compile_module", compile_and_verify)
    return checked


PLANNED_CHECKS = {
    check.__name__: check
    for check in (
        test_nonzero_at_zero_does_not_leak_through_padding,
        test_softmax_over_padded_channels,
        test_max_pool_borders_are_minus_infinity,
        test_concat_of_odd_channel_counts_then_conv,
        test_batch_norm_with_beta_and_residual_div,
        test_nan_and_inf_inputs_propagate_exactly,
    )
}


@pytest.mark.parametrize("name", PLANNED_CHECKS)
def test_planned_programs_keep_their_results(name: str, verified_plans: list[int]) -> None:
    check = PLANNED_CHECKS[name]
    if name == "test_nonzero_at_zero_does_not_leak_through_padding":
        for unary, attributes in (("nn.sigmoid", ""), ("nn.clip", "min 0.5 max 2.0 ")):
            check(unary, attributes)
    else:
        check()
    assert verified_plans and all(views > 0 for views in verified_plans)


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
        if target not in PIPELINE_TARGETS:
            continue
        add = next(
            op for op in compile_module(module, target, True).walk() if isinstance(op, AddOp)
        )
        assert kernel_of(add).kernel_name.data != "add_ref"
        assert {encoding_name(v.type) for v in (*add.operands, *add.results)} == {"NCHW8c"}


@pytest.mark.parametrize("name", tiered(sorted(ZOO), ["densenet121_zoo", "unet"]))
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
