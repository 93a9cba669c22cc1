"""`fuse-post-ops` and `nn.fused_conv2d`: the fused program computes what the unfused one
did (interpreter and generated module, NaN and Inf included), fusion follows what the chosen
kernel accepts, and a fused residual add is planned in place on its addend. The guards and
bounds of oneDNN's fused kernels are tested in tests/kernels/test_onednn_bounds.py."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.ir import SSAValue

from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.nn import FusedConv2dOp, shape_of
from nnlayout.examples.make_models import build
from nnlayout.frontends.onnx import import_model
from nnlayout.kernels.providers import registry
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.fused_programs import FUSE, T, block, fused_ops, with_specials
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    assert_same,
    compile_module,
    dense,
    parse,
    random_inputs,
)
from nnlayout.transforms import remarks

pytestmark = pytest.mark.onednn  # its kernels are the only fused ones


@pytest.mark.parametrize(
    ("activation", "attributes"),
    [
        ("nn.relu", ""),
        ("nn.leaky_relu", "alpha 0.1 "),
        ("nn.sigmoid", ""),
        ("nn.tanh", ""),
        ("nn.clip", "min 0.0 max 6.0 "),
        ("nn.leaky_relu", "alpha 0.0 "),
    ],
)
@pytest.mark.parametrize("channels", [16, 5])  # 5: padded blocked formats, if oneDNN picks one
def test_fused_programs_compute_the_unfused_results(
    activation: str, attributes: str, channels: int
) -> None:
    module = parse(block(channels, activation, attributes))
    inputs = with_specials(random_inputs(module))
    expected = Interpreter(module).run(inputs)
    fused = compile_module(module, "onednn", True, FUSE)
    assert [op.addend is not None for op in fused_ops(fused)] == [True, False]
    assert not any(op.name in ("nn.add", activation) for op in fused.walk())
    assert_same(expected, Interpreter(fused).run(inputs))
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    assert_same(expected, Interpreter(planned).run(inputs))
    assert_same(expected, run_generated(planned, inputs))


def norm_then(c: int, activation: str, attributes: str = "", uses: int = 1) -> str:
    """batch norm -> activation (DenseNet's pre-activation), over 2 x c x 9 x 9."""
    t, v = T.format(c=c), f"tensor<{c}xf32>"
    extra = f", {t}" * (uses - 1)
    return f"""
func.func @f(%x: {t}) -> ({t}{extra}) {{
  %scale = nn.constant dense<{dense((c,), 3)}> : {v}
  %shift = nn.constant dense<{dense((c,), 4)}> : {v}
  %mean = nn.constant dense<{dense((c,), 5)}> : {v}
  %var = nn.constant dense<{json.dumps(np.linspace(0.5, 2.0, c).tolist())}> : {v}
  %n = nn.batch_norm %x, %scale, %shift, %mean, %var epsilon 1.0e-05 : ({t}, {v}, {v}, {v}, {v}) -> {t}
  %y = {activation} %n {attributes}: {t}
  func.return %y{", %n" * (uses - 1)} : {t}{extra}
}}"""


@pytest.mark.parametrize(
    ("activation", "attributes"),
    [
        ("nn.relu", ""),
        ("nn.clip", "min 0.0 max 6.0 "),
        ("nn.sigmoid", ""),
        ("nn.leaky_relu", "alpha 0.1 "),
    ],
)
@pytest.mark.parametrize("channels", [16, 5])
@pytest.mark.parametrize("target", ["onednn", "onednn-nchw8c"])
def test_batch_norm_and_activation_run_as_one_convolution(
    activation: str, attributes: str, channels: int, target: str
) -> None:
    """`act(batch_norm(x))` becomes a depthwise 1x1 convolution (weight s = scale /
    sqrt(var + eps), bias shift - mean * s) with the activation fused, computing the same
    values, NaN and Inf included, also with padded channels (5)."""
    module = parse(norm_then(channels, activation, attributes))
    inputs = with_specials(random_inputs(module))
    expected = Interpreter(module).run(inputs)
    planned = compile_module(module, target, True, DEFAULT_PIPELINE)
    [fused] = fused_ops(planned)
    assert (fused.groups.value.data, shape_of(fused.weight), fused.activation.data) == (
        channels,
        (channels, 1, 1, 1),
        activation.removeprefix("nn."),
    )
    assert not [op for op in planned.walk() if op.name == "nn.batch_norm"]
    assert_same(expected, Interpreter(planned).run(inputs))
    assert_same(expected, run_generated(planned, inputs))


@pytest.mark.parametrize(("target", "uses"), [("avx2", 1), ("ref", 1), ("onednn", 2)])
def test_batch_norm_stays_where_no_convolution_kernel_fuses_it(target: str, uses: int) -> None:
    """numpy kernels gain nothing from the rewrite; a batch norm whose result is also used
    elsewhere would still have to be computed."""
    module = parse(norm_then(16, "nn.relu", uses=uses))
    planned = compile_module(module, target, True, DEFAULT_PIPELINE)
    assert not fused_ops(planned)
    assert [op for op in planned.walk() if op.name == "nn.batch_norm"]
    assert_same(
        Interpreter(module).run(random_inputs(module)),
        Interpreter(planned).run(random_inputs(module)),
    )


def test_a_batch_norm_whose_convolution_is_refused_stays_as_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the family's fused convolution kernel refuses the depthwise convolution, the
    batch norm and activation stay, nothing built for the attempt is left in the IR, and the
    remark names the ops the user wrote."""
    fused_kernel = registry().lookup("fused_conv2d_onednn")
    monkeypatch.setitem(
        registry().kernels,
        "fused_conv2d_onednn",
        dataclasses.replace(
            fused_kernel, accepts=lambda op, target, padding: "refused by this test"
        ),
    )
    module = parse(norm_then(16, "nn.relu"))
    with remarks.collecting() as collected:
        compiled = compile_module(module, "onednn", True, FUSE)
    assert [r.message for r in collected if r.pass_name == "fuse-post-ops"] == [
        "nn.batch_norm and nn.relu not run as one convolution: refused by this test"
    ]
    assert str(compiled) == str(
        compile_module(module, "onednn", True, "select-dispatch{{target={target}}}")
    )


def test_nan_stays_nan_through_a_fused_relu() -> None:
    """oneDNN's relu post-op is max(x, 0) that turns NaN into 0; the fused relu keeps it."""
    module = parse(block(16, "nn.relu"))
    inputs = [np.full_like(x, np.nan) for x in random_inputs(module)]
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    assert fused_ops(planned)
    for result in run_generated(planned, inputs):
        assert np.isnan(result).all()


CONV_THEN = """
func.func @f(%x: tensor<1x16x6x6xf32>, %r1: tensor<1x16x6x6xf32>, %r2: tensor<1x16x6x6xf32>) -> tensor<1x16x6x6xf32> {
  %w = nn.constant dense<0.05> : tensor<16x16x3x3xf32>
  %b = nn.constant dense<-0.1> : tensor<16xf32>
  %c = nn.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x6x6xf32>, tensor<16x16x3x3xf32>, tensor<16xf32>) -> tensor<1x16x6x6xf32>
  BODY
}
"""
SIX = "tensor<1x16x6x6xf32>"


@pytest.mark.parametrize(
    "body",
    [
        f"%s1 = nn.add %c, %r1 : ({SIX}, {SIX}) -> {SIX}\n"
        f"  %s2 = nn.add %s1, %r2 : ({SIX}, {SIX}) -> {SIX}\n  func.return %s2 : {SIX}",
        f"%a1 = nn.relu %c : {SIX}\n  %a2 = nn.sigmoid %a1 : {SIX}\n  func.return %a2 : {SIX}",
    ],
    ids=["two-adds", "two-activations"],
)
def test_a_second_post_op_of_a_kind_stays_an_op_of_its_own(body: str) -> None:
    """A fused convolution takes one addend and one activation: a second add or activation
    after it must not replace the first (found by mutation: r1 or the relu silently dropped)."""
    module = parse(CONV_THEN.replace("BODY", body))
    inputs = random_inputs(module)
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    assert len(fused_ops(planned)) == 1
    assert_same(Interpreter(module).run(inputs), Interpreter(planned).run(inputs))


def test_a_user_written_fused_op_runs_on_the_reference_kernel() -> None:
    """The unoptimised program may hold nn.fused_conv2d itself: the interpreter's reference
    kernel computes conv + bias + addend, then the activation's own reference kernel."""
    module = parse(block(8, "nn.relu"))
    fused = compile_module(module, "onednn", True, FUSE)
    for op in fused.walk():
        op.attributes.pop("kernel", None)  # as if written by hand: no kernel chosen
    inputs = with_specials(random_inputs(module))
    assert_same(Interpreter(module).run(inputs), Interpreter(fused).run(inputs))


@pytest.mark.parametrize("target", ["ref", "avx2", "avx512"])
def test_kernels_without_a_fused_variant_keep_the_program(target: str) -> None:
    module = parse(block(16, "nn.relu"))
    with remarks.collecting() as collected:
        compiled = compile_module(module, target, True, FUSE)
    assert not fused_ops(compiled)
    assert not [r for r in collected if r.pass_name == "fuse-post-ops"]
    assert str(compiled) == str(
        compile_module(module, target, True, "select-dispatch{{target={target}}}")
    )


def offset(view: SSAValue) -> int:
    """The byte offset of a `memref.view` of the arena."""
    constant = view.owner.operands[1].owner
    assert isinstance(constant, arith.ConstantOp)
    return constant.value.value.data


@pytest.mark.parametrize(("conv_input", "in_place"), [("%e", True), ("%r", False)])
def test_the_residual_sum_is_planned_in_place_on_its_addend(
    conv_input: str, in_place: bool
) -> None:
    """The addend %r dies at the fused convolution, which accumulates into its buffer;
    unless the convolution also reads %r (conv(r) + r): writing over r would change the
    convolution's input while it runs."""
    t = T.format(c=16)
    w = "tensor<16x16x3x3xf32>"
    conv = "strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1"
    module = parse(f"""
func.func @f(%x: {t}) -> {t} {{
  %w = nn.constant dense<{dense((16, 16, 3, 3), 1)}> : {w}
  %r = nn.conv2d %x, %w {conv} : ({t}, {w}) -> {t}
  %e = nn.tanh %r : {t}
  %c = nn.conv2d {conv_input}, %w {conv} : ({t}, {w}) -> {t}
  %s = nn.add %c, %r : ({t}, {t}) -> {t}
  %y = nn.sigmoid %s : {t}
  func.return %y : {t}
}}""")
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE + ",verify-memory-plan")
    (compute,) = [
        op
        for op in planned.walk()
        if isinstance(op, ComputeOp) and isinstance(op.inner, FusedConv2dOp)
    ]
    assert kernel_of(compute.inner).kernel_name.data == "fused_conv2d_sum_onednn"
    addend_view, out_view = compute.ins[3], compute.outs[0]
    assert (offset(addend_view) == offset(out_view)) == in_place
    inputs = with_specials(random_inputs(module))
    expected = Interpreter(module).run(inputs)
    assert_same(expected, Interpreter(planned).run(inputs))
    assert_same(expected, run_generated(planned, inputs))


def test_small_resnet_fuses_every_residual_add() -> None:
    module = import_model(build("resnet50", small=True), inline_limit=1 << 30).module
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    names = [kernel_of(op).kernel_name.data for op in planned.walk() if kernel_of(op)]
    # 4 residual adds, and the 2 adds of the 7x7 stem's per-channel sums (split-image-conv)
    assert "add_onednn" not in names and names.count("fused_conv2d_sum_onednn") == 6
    inputs = random_inputs(module)
    expected = Interpreter(module).run(inputs)
    assert_same(expected, run_generated(planned, inputs))


@pytest.mark.parametrize(
    ("activation", "attributes"),
    [
        ("nn.relu", ""),
        ("nn.clip", "min 0.0 max 6.0 "),
        ("nn.clip", "max 6.0 "),
        ("nn.leaky_relu", "alpha 0.0 "),
    ],
)
def test_nnan_fuses_the_fast_activations_with_the_same_finite_results(
    activation: str, attributes: str
) -> None:
    """Under `nnan` the promise is the user's: on finite inputs the results are the same."""
    module = parse(block(16, activation, attributes))
    fast = compile_module(module, "onednn", True, FUSE[:-2] + " nnan=true}}")
    assert [op.nnan is not None and op.activation is not None for op in fused_ops(fast)] == [
        True,
        True,
    ]
    inputs = random_inputs(module)
    assert_same(Interpreter(module).run(inputs), Interpreter(fast).run(inputs))
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE[:-2] + " nnan=true}}")
    assert_same(Interpreter(module).run(inputs), run_generated(planned, inputs))
