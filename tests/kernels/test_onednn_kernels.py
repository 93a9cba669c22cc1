"""The oneDNN kernels against the reference kernels, end to end: each program is run by the
reference interpreter and again after `select-dispatch{target=onednn}, insert-layouts,
propagate-layouts, fold-constants`, which runs the chosen oneDNN kernels on packed values
(the helpers of tests/helpers.py). Each test also checks that oneDNN kernels were
chosen, so that a silent fallback to numpy cannot pass for oneDNN. Dispatch must never keep a
`ref` implementation for ResNet's convolutions."""

from __future__ import annotations

import ctypes
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.utils.test_value import create_ssa_value

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import LayoutAttr, LayoutSpec, encoding_name
from nnlayout.examples.make_models import ZOO, build
from nnlayout.frontends.onnx import import_model
from nnlayout.kernels.onednn import calls
from nnlayout.kernels.onednn.common import ANY, format_of
from nnlayout.kernels.onednn.convolution import conv_choice, conv_chosen, conv_geometry, conv_pd
from nnlayout.kernels.onednn.eltwise import binary_reason
from nnlayout.kernels.onednn.executor import SlowImplementationWarning
from nnlayout.kernels.onednn.kernels import forget_choices
from nnlayout.kernels.onednn.matmul import fc_weights_layout, gemm_accepts
from nnlayout.kernels.onednn.prepared import Prepared, compiled_for
from nnlayout.kernels.onednn.target_options import OneDNNOptions
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.targets import TARGETS, get_target
from nnlayout.lowering.to_numpy import import_generated, run_generated, translate
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    LAYOUT_PIPELINE,
    activation_reorders,
    assert_same,
    check_semantics,
    compile_module,
    parse,
    random_inputs,
    tiered,
)

pytestmark = pytest.mark.onednn


def dense(shape: tuple[int, ...], seed: int) -> str:
    return json.dumps(np.random.default_rng(seed).standard_normal(shape).round(3).tolist())


def check(
    module: ModuleOp, inputs: list[np.ndarray], onednn_ops: int, target: str = "onednn"
) -> ModuleOp:
    """Same results after compiling for `target`, with at least `onednn_ops` oneDNN kernels."""
    expected = Interpreter(module).run(inputs)
    compiled = compile_module(module, target, padding=True)
    chosen = [kernel_of(op).kernel_name.data for op in compiled.walk() if kernel_of(op)]
    assert sum(name.endswith("_onednn") for name in chosen) >= onednn_ops, " ".join(chosen)
    assert_same(expected, Interpreter(compiled).run(inputs))
    for op in compiled.walk():  # the declared workspace holds the scratchpad actually used
        if kernel_of(op) and kernel_of(op).kernel_name.data.endswith("_onednn"):
            used = max(c.scratchpad_bytes for c in compiled_for(op)[:2] if c)
            assert kernel_of(op).workspace.data >= used, (op.name, used)
    return compiled


def conv_program(
    c_in: int,
    c_out: int,
    size: int,
    kernel: int,
    strides: str,
    pads: str,
    dilations: str,
    groups: int,
    out: int,
    then: str = "",
    batch: int = 2,
) -> str:
    w = (c_out, c_in // groups, kernel, kernel)
    n = batch
    return f"""
func.func @f(%x: tensor<{n}x{c_in}x{size}x{size}xf32>) -> tensor<{n}x{c_out}x{out}x{out}xf32> {{
  %w = nn.constant dense<{dense(w, c_in + c_out)}> : tensor<{w[0]}x{w[1]}x{kernel}x{kernel}xf32>
  %b = nn.constant dense<{dense((c_out,), 3)}> : tensor<{c_out}xf32>
  %c = nn.conv2d %x, %w, %b strides {strides} pads {pads} dilations {dilations} groups {groups} : (tensor<{n}x{c_in}x{size}x{size}xf32>, tensor<{w[0]}x{w[1]}x{kernel}x{kernel}xf32>, tensor<{c_out}xf32>) -> tensor<{n}x{c_out}x{out}x{out}xf32>
  {then or "func.return %c"} : tensor<{n}x{c_out}x{out}x{out}xf32>
}}"""


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("stem 3->16 7x7 s2", (3, 16, 20, 7, "[2, 2]", "[3, 3, 3, 3]", "[1, 1]", 1, 10)),
        ("3x3 16->24", (16, 24, 9, 3, "[1, 1]", "[1, 1, 1, 1]", "[1, 1]", 1, 9)),
        ("1x1 5->13 padded", (5, 13, 6, 1, "[1, 1]", "[0, 0, 0, 0]", "[1, 1]", 1, 6)),
        ("depthwise 24", (24, 24, 9, 3, "[1, 1]", "[1, 1, 1, 1]", "[1, 1]", 24, 9)),
        ("depthwise 12 s2", (12, 12, 9, 3, "[2, 2]", "[1, 1, 1, 1]", "[1, 1]", 12, 5)),
        ("grouped 16/4", (16, 16, 9, 3, "[1, 1]", "[1, 1, 1, 1]", "[1, 1]", 4, 9)),
        ("dilation 2", (8, 16, 11, 3, "[1, 1]", "[2, 2, 2, 2]", "[2, 2]", 1, 11)),
        ("asymmetric pads", (8, 16, 9, 3, "[1, 1]", "[2, 0, 0, 2]", "[1, 1]", 1, 9)),
    ],
)
def test_convolutions(name: str, args: tuple) -> None:
    module = parse(conv_program(*args))
    compiled = check(module, random_inputs(module), onednn_ops=1)
    (conv,) = [op for op in compiled.walk() if op.name == "nn.conv2d"]
    choice = conv_choice(conv_geometry(conv))
    assert not isinstance(choice, str) and not choice.implementation.startswith("ref")


@pytest.mark.parametrize(
    ("c_in", "c_out", "groups", "kernel", "stride", "channels_last"),
    [
        (16, 16, 2, 3, 1, True),
        (64, 64, 4, 3, 1, True),
        (96, 96, 3, 3, 1, True),
        (128, 128, 32, 3, 1, False),
        (64, 64, 8, 3, 2, False),
        (40, 64, 2, 3, 1, False),
        (64, 128, 4, 1, 1, False),
        (48, 48, 2, 3, 1, True),
        (80, 80, 2, 3, 1, True),
    ],
)
def test_grouped_convolutions(
    c_in: int, c_out: int, groups: int, kernel: int, stride: int, channels_last: bool
) -> None:
    """Same results as the reference kernel for 2 to 32 groups of 4 to 40 channels, in the
    formats oneDNN chooses. With 8, 16 and 32 channels per group, oneDNN's jit or brgconv
    code (not its gemm, 3x slower) runs on both avx2 and avx512_core on the channels-last
    activations of the convolutions around it, with grouped weights packed at compile time
    in a layout of ours (gOIhw8i8o = OIHW8i8o...). With 24 and 40, oneDNN's own weights
    would pad each group, which we cannot name, so weights we can name are asked for."""
    size = 9
    out = (size - 1) // stride + 1
    module = parse(
        conv_program(
            c_in,
            c_out,
            size,
            kernel,
            f"[{stride}, {stride}]",
            f"[{kernel // 2}, {kernel // 2}, {kernel // 2}, {kernel // 2}]",
            "[1, 1]",
            groups,
            out,
        )
    )
    compiled = check(module, random_inputs(module), onednn_ops=1)
    if not channels_last:
        return
    (conv,) = [op for op in compiled.walk() if op.name == "nn.conv2d"]
    assert kernel_of(conv).operands[0] == kernel_of(conv).results[0] == "NHWC"
    assert LayoutSpec.parse(kernel_of(conv).operands[1]).is_blocked
    implementation = conv_choice(conv_geometry(conv)).implementation
    assert implementation.startswith(("jit", "brgconv")), implementation


def test_grouped_weights_with_padded_groups_are_refused_by_name() -> None:
    """Two groups of 24: a 16-block of O would pad each group to 32 in oneDNN but O = 48 to
    48 in our layout, so a kernel handed that layout says so instead of misreading it."""
    data = TensorType(f32, [1, 48, 9, 9], LayoutAttr("NHWC"))
    values = [
        create_ssa_value(t) for t in (data, TensorType(f32, [48, 24, 3, 3], LayoutAttr("OHWI16o")))
    ]
    conv = nn.Conv2dOp(*values, strides=[1, 1], pads=[1, 1, 1, 1], dilations=[1, 1], groups=2)
    with pytest.raises(
        ValueError,
        match=r"layout 'OHWI16o' has no oneDNN format \(grouped "
        r"\(2, 24, 24, 3, 3\)\)",
    ):
        compiled_for(conv)


def test_stem_keeps_one_layout_not_padded_blocks() -> None:
    """A 3-channel source in nChw8c would be ref:any; oneDNN's own pick, nchw -> nChw8c,
    would cost the channels-last layers after it a reorder each: nhwc in and out."""
    module = parse(conv_program(3, 64, 32, 3, "[1, 1]", "[1, 1, 1, 1]", "[1, 1]", 1, 32))
    compiled = compile_module(module, "onednn", padding=True)
    (conv,) = [op for op in compiled.walk() if op.name == "nn.conv2d"]
    assert kernel_of(conv).operands[0] == kernel_of(conv).results[0] == "NHWC"
    assert kernel_of(conv).kernel_name.data == "conv2d_onednn"
    assert not conv_choice(conv_geometry(conv)).implementation.startswith("ref")


@pytest.mark.parametrize(
    "target, layout",
    [
        ("onednn-nchw8c", "NCHW8c"),
        ("onednn-nhwc", "NHWC"),
        pytest.param(
            "onednn-nchw16c",
            "NCHW16c",
            marks=pytest.mark.onednn_avx512,
        ),
    ],
)
def test_target_asks_for_its_activation_format(target: str, layout: str) -> None:
    """The asked format on both sides of a convolution; the 3-channel stem takes its input
    plain (an NCHW8c source would be ref:any) and writes the asked format; same results."""
    program = conv_program(16, 24, 9, 3, "[1, 1]", "[1, 1, 1, 1]", "[1, 1]", 1, 9)
    module = parse(program)
    compiled = check(module, random_inputs(module), onednn_ops=1, target=target)
    (conv,) = [op for op in compiled.walk() if op.name == "nn.conv2d"]
    assert kernel_of(conv).operands[0] == kernel_of(conv).results[0] == layout
    stem = compile_module(
        parse(conv_program(3, 16, 12, 3, "[1, 1]", "[1, 1, 1, 1]", "[1, 1]", 1, 12)),
        "onednn-nchw8c",
        padding=True,
    )
    (conv,) = [op for op in stem.walk() if op.name == "nn.conv2d"]
    assert (kernel_of(conv).operands[0], kernel_of(conv).results[0]) == ("", "NCHW8c")
    choice = conv_choice(conv_geometry(conv), "NCHW8c")
    assert not isinstance(choice, str) and not choice.implementation.startswith("ref")


def test_a_preferred_implementation_replaces_onednns_first_choice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """oneDNN offers several implementations of a 1x1 convolution (`next_implementation`,
    ending at its reference one). A target preferring a later one gets it, on the same
    activation formats, and the compiled program runs it with the same results; a preference
    oneDNN does not offer, or offers only for another instruction set (the avx2 code it also
    lists on an AVX-512 machine, or its sse41 code), keeps its first choice."""
    module = parse(conv_program(16, 24, 9, 1, "[1, 1]", "[0, 0, 0, 0]", "[1, 1]", 1, 9))
    (op,) = [op for op in module.walk() if op.name == "nn.conv2d"]
    geometry = conv_geometry(op)
    first = conv_choice(geometry)
    assert not isinstance(first, str)
    pd = conv_pd(geometry, first.formats[0].value, ANY, first.formats[2].value)
    offered = [pd.implementation]
    while pd.next_implementation():
        offered.append(pd.implementation)
    assert offered[0] == first.implementation and offered[-1].startswith("ref")
    assert pd.implementation == offered[-1]  # the last one stays when there is no next
    isa = first.implementation.rpartition(":")[2]
    later = next(
        name for name in offered[1:] if name != first.implementation and name.endswith(f":{isa}")
    )
    chosen = conv_choice(geometry, "", (later,))
    assert not isinstance(chosen, str) and chosen.implementation == later
    assert (chosen.formats[0], chosen.formats[2]) == (first.formats[0], first.formats[2])
    assert conv_choice(geometry, "", ("no_such_implementation",)) == first
    other_isa = [name for name in offered[1:-1] if not name.endswith(f":{isa}")]
    assert other_isa  # sse41 code at least, on AVX2 and AVX-512 machines alike
    assert conv_choice(geometry, "", tuple(other_isa)) == first

    onednn = get_target("onednn")
    later_first = replace(OneDNNOptions.of(onednn), preferred_implementations=(later,))
    target = replace(onednn.with_options(later_first), name="onednn-later")
    monkeypatch.setitem(TARGETS, target.name, target)
    compiled = check(module, random_inputs(module), onednn_ops=1, target=target.name)
    (conv,) = [op for op in compiled.walk() if op.name == "nn.conv2d"]
    assert compiled_for(conv)[0].pd.implementation == later


def test_nan_and_inf_propagate_through_conv_and_max_pool() -> None:
    then = (
        "%p = nn.max_pool2d %c kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations "
        "[1, 1] ceil_mode : tensor<2x5x9x9xf32> -> tensor<2x5x5x5xf32>\n"
        "  %s = nn.sigmoid %p : tensor<2x5x5x5xf32>\n  func.return %s"
    )
    text = conv_program(3, 5, 9, 3, "[1, 1]", "[1, 1, 1, 1]", "[1, 1]", 1, 9, then)
    module = parse(
        text.replace("tensor<2x5x9x9xf32>\n}", "tensor<2x5x5x5xf32>\n}").replace(
            "-> tensor<2x5x9x9xf32> {", "-> tensor<2x5x5x5xf32> {"
        )
    )
    inputs = random_inputs(module)
    inputs[0][0, 1, 4, 4] = np.nan
    inputs[0][1, 2, 0, 0] = np.inf
    expected = check(module, inputs, onednn_ops=3)
    assert expected is not None


@pytest.mark.parametrize("poison", [np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("weights_as", ["constant", "argument"])
def test_a_non_finite_weight_meets_the_zero_padding_as_in_the_reference(
    poison: float, weights_as: str
) -> None:
    """0 * inf is NaN in the padding of the reference convolution, where oneDNN skips the
    padded taps (and gave finite border values): such a call runs the reference kernel."""
    weights = np.random.default_rng(5).standard_normal((11, 5, 3, 3)).round(3)
    weights[2, 3, 0, 0] = poison
    literal = (
        json.dumps(weights.tolist())
        .replace("Infinity", "0x7F800000")
        .replace("-0x7F800000", "0xFF800000")
        .replace("NaN", "0x7FC00000")
    )
    argument = ", %w: tensor<11x5x3x3xf32>" if weights_as == "argument" else ""
    constant = "" if argument else f"%w = nn.constant dense<{literal}> : tensor<11x5x3x3xf32>\n  "
    module = parse(f"""
func.func @f(%x: tensor<2x5x7x7xf32>{argument}) -> tensor<2x11x7x7xf32> {{
  {constant}%c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x5x7x7xf32>, tensor<11x5x3x3xf32>) -> tensor<2x11x7x7xf32>
  %r = nn.relu %c : tensor<2x11x7x7xf32>
  func.return %r : tensor<2x11x7x7xf32>
}}""")
    inputs = random_inputs(module)
    if argument:
        inputs[1] = weights.astype(np.float32)
    expected = Interpreter(module).run(inputs)
    assert np.isnan(expected[0][:, 2, 0, :]).all()  # the top border, as ONNX defines it
    for target in ("onednn", "onednn-nchw8c"):
        check(module, inputs, onednn_ops=1, target=target)
        assert_same(
            expected, run_generated(compile_module(module, target, True, DEFAULT_PIPELINE), inputs)
        )


def test_max_pool_of_only_minus_infinity_is_minus_infinity() -> None:
    """oneDNN's max pooling starts from the lowest float: a window holding only -inf gave
    -3.4e38 (fuzzing, seed 17 program 1547); such inputs are pooled by the numpy kernel."""
    module = parse(
        POOL.format(kind="max_pool2d", extra="", c=16, size=4, k=2, s=2, pads="[0, 0, 0, 0]", out=2)
    )
    (x,) = random_inputs(module)
    x[0, 3, :2, :2] = -np.inf
    compiled = check(module, [x], onednn_ops=1)
    (result,) = Interpreter(compiled).run([x])
    assert result[0, 3, 0, 0] == -np.inf


POOL = """
func.func @f(%x: tensor<1x{c}x{size}x{size}xf32>) -> tensor<1x{c}x{out}x{out}xf32> {{
  %p = nn.{kind} %x kernel [{k}, {k}] strides [{s}, {s}] pads {pads} dilations [1, 1] {extra}: tensor<1x{c}x{size}x{size}xf32> -> tensor<1x{c}x{out}x{out}xf32>
  func.return %p : tensor<1x{c}x{out}x{out}xf32>
}}"""


@pytest.mark.parametrize(
    ("kind", "extra", "size", "k", "s", "pads", "out", "onednn"),
    [
        ("max_pool2d", "", 9, 3, 2, "[1, 1, 1, 1]", 5, 1),
        ("max_pool2d", "ceil_mode ", 8, 3, 2, "[0, 0, 0, 0]", 4, 1),
        ("avg_pool2d", "", 9, 3, 2, "[1, 0, 1, 2]", 5, 1),
        ("avg_pool2d", "ceil_mode ", 8, 3, 2, "[1, 1, 1, 1]", 5, 1),
        ("avg_pool2d", "count_include_pad ", 9, 3, 2, "[1, 1, 1, 1]", 5, 1),
        # ceil_mode overhang with count_include_pad: refused, the numpy kernel runs it
        ("avg_pool2d", "ceil_mode count_include_pad ", 8, 3, 2, "[1, 1, 1, 1]", 5, 0),
    ],
)
def test_pooling(
    kind: str, extra: str, size: int, k: int, s: int, pads: str, out: int, onednn: int
) -> None:
    module = parse(
        POOL.format(c=16, size=size, out=out, kind=kind, extra=extra, k=k, s=s, pads=pads)
    )
    inputs = random_inputs(module)
    inputs[0] -= 3  # all negative: a zero border would win a max
    compiled = check(module, inputs, onednn_ops=onednn)
    if not onednn:
        assert all(
            not kernel_of(op).kernel_name.data.endswith("_onednn")
            for op in compiled.walk()
            if kernel_of(op)
        )


def test_elementwise_binary_batch_norm_concat_and_global_pool() -> None:
    module = parse(f"""
func.func @f(%x: tensor<2x16x6x6xf32>, %y: tensor<2x16x6x6xf32>) -> tensor<2x32x1x1xf32> {{
  %a = nn.add %x, %y : (tensor<2x16x6x6xf32>, tensor<2x16x6x6xf32>) -> tensor<2x16x6x6xf32>
  %m = nn.mul %a, %x : (tensor<2x16x6x6xf32>, tensor<2x16x6x6xf32>) -> tensor<2x16x6x6xf32>
  %d = nn.sub %m, %y : (tensor<2x16x6x6xf32>, tensor<2x16x6x6xf32>) -> tensor<2x16x6x6xf32>
  %s = nn.sigmoid %d : tensor<2x16x6x6xf32>
  %t = nn.tanh %s : tensor<2x16x6x6xf32>
  %n = nn.neg %t : tensor<2x16x6x6xf32>
  %l = nn.leaky_relu %n alpha 0.1 : tensor<2x16x6x6xf32>
  %q = nn.abs %l : tensor<2x16x6x6xf32>
  %r = nn.sqrt %q : tensor<2x16x6x6xf32>
  %g = nn.constant dense<{dense((16,), 1)}> : tensor<16xf32>
  %b = nn.constant dense<{dense((16,), 2)}> : tensor<16xf32>
  %mu = nn.constant dense<{dense((16,), 3)}> : tensor<16xf32>
  %v = nn.constant dense<{json.dumps((np.arange(16) / 4 + 0.5).tolist())}> : tensor<16xf32>
  %bn = nn.batch_norm %r, %g, %b, %mu, %v epsilon 1.0e-05 : (tensor<2x16x6x6xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x16x6x6xf32>
  %c = nn.concat %bn, %x axis 1 : (tensor<2x16x6x6xf32>, tensor<2x16x6x6xf32>) -> tensor<2x32x6x6xf32>
  %p = nn.global_avg_pool %c : tensor<2x32x6x6xf32> -> tensor<2x32x1x1xf32>
  func.return %p : tensor<2x32x1x1xf32>
}}""")
    inputs = random_inputs(module)
    inputs[0][0, 3, 2, 2] = np.nan
    check(module, inputs, onednn_ops=12)


@pytest.mark.parametrize("variance", ["constant", "argument"])
def test_batch_norm_dividing_by_zero_is_nan_as_in_the_reference(variance: str) -> None:
    """variance + epsilon == 0: the reference's x * inf + (shift - mean * inf) is NaN (as
    onnxruntime's), oneDNN's (x - mean) / 0 gave +-inf. Such calls run the reference."""
    vector = "tensor<3xf32>"
    v = "" if variance == "argument" else f"%v = nn.constant dense<[0.0, 1.0, 0.0]> : {vector}\n  "
    module = parse(f"""
func.func @f(%x: tensor<1x3x2x2xf32>{", %v: " + vector if variance == "argument" else ""}) -> tensor<1x3x2x2xf32> {{
  %s = nn.constant dense<1.0> : {vector}
  %b = nn.constant dense<[0.0, 1.0, 0.5]> : {vector}
  %m = nn.constant dense<[0.0, 0.0, 1.0]> : {vector}
  {v}%y = nn.batch_norm %x, %s, %b, %m, %v epsilon 0.0 : (tensor<1x3x2x2xf32>, {vector}, {vector}, {vector}, {vector}) -> tensor<1x3x2x2xf32>
  func.return %y : tensor<1x3x2x2xf32>
}}""")
    inputs = random_inputs(module)
    inputs[0][0, 0, 0, 0] = 0.0
    if variance == "argument":
        inputs[1][...] = [0.0, 1.0, 0.0]
    expected = Interpreter(module).run(inputs)
    assert np.isnan(expected[0][0, 0]).all() and np.isfinite(expected[0][0, 1]).all()
    compiled = check(module, inputs, onednn_ops=1)
    assert_same(
        expected, run_generated(compile_module(module, "onednn", True, DEFAULT_PIPELINE), inputs)
    )
    assert any(
        kernel_of(op).kernel_name.data == "batch_norm_onednn"
        for op in compiled.walk()
        if kernel_of(op)
    )


@pytest.mark.parametrize("target", ["onednn", "onednn-nchw8c"])
def test_broadcasting_binary_ops(target: str) -> None:
    """oneDNN broadcasts its second source: x * scale and add run as they are, scale * x
    (torchvision's squeeze-and-excitation) with its operands swapped; a broadcast
    subtrahend runs in oneDNN, a broadcast dividend cannot be swapped and falls back, saying
    so; NaN in the scale reaches the same outputs."""
    module = parse("""
func.func @f(%x: tensor<2x16x5x5xf32>, %s: tensor<2x16x1x1xf32>, %m: tensor<1x1x5x5xf32>) -> (tensor<2x16x5x5xf32>, tensor<2x16x5x5xf32>) {
  %a = nn.mul %x, %s : (tensor<2x16x5x5xf32>, tensor<2x16x1x1xf32>) -> tensor<2x16x5x5xf32>
  %b = nn.mul %s, %a : (tensor<2x16x1x1xf32>, tensor<2x16x5x5xf32>) -> tensor<2x16x5x5xf32>
  %c = nn.add %m, %b : (tensor<1x1x5x5xf32>, tensor<2x16x5x5xf32>) -> tensor<2x16x5x5xf32>
  %d = nn.sub %c, %s : (tensor<2x16x5x5xf32>, tensor<2x16x1x1xf32>) -> tensor<2x16x5x5xf32>
  %e = nn.div %s, %d : (tensor<2x16x1x1xf32>, tensor<2x16x5x5xf32>) -> tensor<2x16x5x5xf32>
  func.return %d, %e : tensor<2x16x5x5xf32>, tensor<2x16x5x5xf32>
}""")
    inputs = random_inputs(module)
    inputs[1][1, 3, 0, 0] = np.nan
    compiled = check(module, inputs, onednn_ops=4, target=target)
    kernels = {
        op.results[0].name_hint: kernel_of(op).kernel_name.data
        for op in compiled.walk()
        if op.name.startswith("nn.") and kernel_of(op)
    }
    assert [kernels[name] for name in "abcde"] == [
        "mul_onednn",
        "mul_onednn",
        "add_onednn",
        "sub_onednn",
        "div_any",
    ]
    for op in compiled.walk():
        if kernel_of(op) and kernel_of(op).kernel_name.data.endswith("_onednn"):
            assert not compiled_for(op)[0].pd.implementation.startswith("ref")
    (div,) = [op for op in compiled.walk() if op.name == "nn.div"]
    assert binary_reason(div) == (
        "operand 0 broadcasts, and oneDNN broadcasts only its second source, which nn.div "
        "does not let us swap"
    )
    assert_same(
        Interpreter(module).run(inputs),
        run_generated(compile_module(module, target, True, DEFAULT_PIPELINE), inputs),
    )


def test_one_pixel_convolutions_keep_channels_last() -> None:
    """Squeeze-and-excitation's fully connected layers are 1x1 convolutions of one pixel,
    whose nchw and nhwc are the same bytes: named as asked (nhwc), not oneDNN's first name
    for them (nchw), they cost no reorder between the channels-last layers around them."""
    module = parse(f"""
func.func @f(%x: tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32> {{
  %w = nn.constant dense<{dense((64, 64, 3, 3), 1)}> : tensor<64x64x3x3xf32>
  %a = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x8x8xf32>
  %g = nn.global_avg_pool %a : tensor<1x64x8x8xf32> -> tensor<1x64x1x1xf32>
  %w1 = nn.constant dense<{dense((16, 64, 1, 1), 2)}> : tensor<16x64x1x1xf32>
  %s1 = nn.conv2d %g, %w1 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x64x1x1xf32>, tensor<16x64x1x1xf32>) -> tensor<1x16x1x1xf32>
  %r = nn.relu %s1 : tensor<1x16x1x1xf32>
  %w2 = nn.constant dense<{dense((64, 16, 1, 1), 3)}> : tensor<64x16x1x1xf32>
  %s2 = nn.conv2d %r, %w2 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x16x1x1xf32>, tensor<64x16x1x1xf32>) -> tensor<1x64x1x1xf32>
  %scale = nn.sigmoid %s2 : tensor<1x64x1x1xf32>
  %m = nn.mul %scale, %a : (tensor<1x64x1x1xf32>, tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  %b = nn.conv2d %m, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x8x8xf32>
  func.return %b : tensor<1x64x8x8xf32>
}}""")
    compiled = check(module, random_inputs(module), onednn_ops=7)
    assert activation_reorders(compiled) == 2  # the input and the result
    for op in compiled.walk():
        if op.name == "nn.conv2d":
            assert kernel_of(op).operands[0] == kernel_of(op).results[0] == "NHWC"


def test_an_operand_already_in_a_layout_onednn_cannot_express_runs_elsewhere() -> None:
    """Hand-written IR whose relu reads an NCHW4c2c value: dispatch asked oneDNN about nchw
    data only, chose relu_onednn, and running it was an internal error ("layout 'NCHW4c2c'
    has no oneDNN format (data)")."""
    module = parse("""
func.func @f(%x: tensor<1x5x3x3xf32>) -> tensor<1x5x3x3xf32> {
  %a = layout.reorder %x : tensor<1x5x3x3xf32> -> tensor<1x5x3x3xf32, #layout.layout<"NCHW4c2c">>
  %b = nn.relu %a : tensor<1x5x3x3xf32, #layout.layout<"NCHW4c2c">>
  %c = layout.reorder %b : tensor<1x5x3x3xf32, #layout.layout<"NCHW4c2c">> -> tensor<1x5x3x3xf32>
  func.return %c : tensor<1x5x3x3xf32>
}""")
    inputs = random_inputs(module)
    compiled = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    relu = next(op for op in compiled.walk() if op.name == "nn.relu")
    assert kernel_of(relu).kernel_name.data != "relu_onednn"
    assert_same(Interpreter(module).run(inputs), Interpreter(compiled).run(inputs))
    assert_same(Interpreter(module).run(inputs), run_generated(compiled, inputs))


@pytest.mark.parametrize(
    ("op", "wrong"),
    [
        (
            'nn.add %x, %z {kernel = #nn.kernel<"add_onednn", operands = ["NCHW8c", "NHWC"], '
            'results = ["NCHW8c"]>} : (T, T) -> T',
            "operand 1 is NHWC but operand 0 is NCHW8c",
        ),
        (
            'nn.add %x, %z {kernel = #nn.kernel<"add_onednn", operands = ["NCHW8c", "NCHW8c"], '
            'results = ["NHWC"]>} : (T, T) -> T',
            "result 0 is NHWC but operand 0 is NCHW8c",
        ),
        (
            'nn.concat %x, %z axis 1 {kernel = #nn.kernel<"concat_onednn", operands = ["NHWC", '
            '""], results = ["NHWC"]>} : (T, T) -> tensor<1x32x4x4xf32>',
            "operand 1 is plain but operand 0 is NHWC",
        ),
        (
            "nn.max_pool2d %x kernel [1, 1] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] "
            '{kernel = #nn.kernel<"max_pool2d_onednn", operands = ["NCHW8c"], results = ["NHWC"]>} '
            ": T -> T",
            "result 0 is NHWC but operand 0 is NCHW8c",
        ),
    ],
)
@pytest.mark.parametrize("backend", ["interpreter", "generated"])
def test_a_star_kernel_listed_with_two_layouts_is_refused_where_it_is_bound(
    op: str, wrong: str, backend: str
) -> None:
    """oneDNN's `"*"` primitives read every data operand, and write the result, in operand
    0's format. An #nn.kernel listing other layouts (insert-layouts reorders to them) ran:
    wrong numbers for the add (an NHWC operand read as NCHW8c)."""
    result = "tensor<1x32x4x4xf32>" if "concat" in op else "T"
    text = f"""
func.func @f(%x: T, %z: T) -> {result} {{
  %y = {op}
  func.return %y : {result}
}}""".replace("T", "tensor<1x16x4x4xf32>")
    module = parse(text)
    inputs = random_inputs(module)
    if backend == "interpreter":
        compiled = compile_module(module, "onednn", True, "insert-layouts")
        with pytest.raises(DiagnosticError, match=re.escape(wrong)):
            Interpreter(compiled).run(inputs)
    else:
        compiled = compile_module(module, "onednn", True, "insert-layouts,bufferize,plan-memory")
        with pytest.raises(DiagnosticError, match=re.escape(wrong)):
            run_generated(compiled, inputs)


@pytest.mark.parametrize(
    ("arguments", "op", "wrong"),
    [
        # "CN" is neither the transposed matrix ("IO") nor the inner product's format: b was
        # read plain through swapped strides
        (
            "%a: tensor<32x48xf32>, %b: tensor<5x48xf32>, %c: tensor<5xf32>",
            'nn.gemm %a, %b, %c trans_b alpha 1.0 beta 1.0 {kernel = #nn.kernel<"gemm_onednn", '
            'operands = ["", "CN", ""], results = [""]>} : (tensor<32x48xf32>, tensor<5x48xf32>, '
            "tensor<5xf32>) -> tensor<32x5xf32>",
            "operand 1 is CN; the kernel takes it plain or ",
        ),
        # the primitive packs plain weights and writes the input's format
        (
            "%x: tensor<1x16x5x5xf32>, %w: tensor<16x8x3x3xf32>",
            "nn.conv_transpose2d %x, %w strides [2, 2] pads [0, 0, 0, 0] output_padding [1, 1] "
            'dilations [1, 1] groups 2 {kernel = #nn.kernel<"conv_transpose2d_onednn", operands = '
            '["NCHW8c", "OIHW8i8o"], results = ["NCHW8c"]>} : (tensor<1x16x5x5xf32>, '
            "tensor<16x8x3x3xf32>) -> tensor<1x16x12x12xf32>",
            "operand 1 is OIHW8i8o; the kernel takes it plain",
        ),
        (
            "%x: tensor<1x16x5x5xf32>, %w: tensor<16x8x3x3xf32>",
            "nn.conv_transpose2d %x, %w strides [2, 2] pads [0, 0, 0, 0] output_padding [1, 1] "
            'dilations [1, 1] groups 2 {kernel = #nn.kernel<"conv_transpose2d_onednn", operands = '
            '["", ""], results = ["NCHW8c"]>} : (tensor<1x16x5x5xf32>, '
            "tensor<16x8x3x3xf32>) -> tensor<1x16x12x12xf32>",
            "result 0 is NCHW8c; the kernel takes it plain",
        ),
        # what dispatch refuses for the result's sake: alpha, a broadcast first operand of a
        # sub (oneDNN broadcasts its second source only), a ceil_mode overhang counted in the
        # divisor (all wrong numbers)
        (
            "%a: tensor<4x8xf32>, %b: tensor<8x6xf32>, %c: tensor<6xf32>",
            'nn.gemm %a, %b, %c alpha 2.0 beta 3.0 {kernel = #nn.kernel<"gemm_onednn", operands = '
            '["", "", ""], results = [""]>} : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<6xf32>) -> '
            "tensor<4x6xf32>",
            "alpha 2.0 (oneDNN's matmul here computes alpha = 1 only)",
        ),
        (
            "%s: tensor<1x16x1x1xf32>, %x: tensor<1x16x4x4xf32>",
            'nn.sub %s, %x {kernel = #nn.kernel<"sub_onednn", operands = ["*", "*"], results = '
            '["*"]>} : (tensor<1x16x1x1xf32>, tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>',
            "operand 0 broadcasts, and oneDNN broadcasts only its second source",
        ),
        (
            "%x: tensor<1x8x6x6xf32>",
            "nn.avg_pool2d %x kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] "
            'ceil_mode count_include_pad {kernel = #nn.kernel<"avg_pool2d_onednn", operands = ["*"], '
            'results = ["*"]>} : tensor<1x8x6x6xf32> -> tensor<1x8x4x4xf32>',
            "ceil_mode overhang with count_include_pad",
        ),
        # an internal error: no oneDNN format, or buffers of another size than the primitive's
        (
            "%x: tensor<1x16x4x4xf32>, %z: tensor<1x16x4x4xf32>",
            'nn.add %x, %z {kernel = #nn.kernel<"add_onednn", operands = ["NCHW4c", "NCHW4c"], '
            'results = ["NCHW4c"]>} : (tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>) -> '
            "tensor<1x16x4x4xf32>",
            "layout 'NCHW4c' has no oneDNN format (data)",
        ),
        (
            "%x: tensor<1x10x4x4xf32>, %s: tensor<10xf32>",
            'nn.batch_norm %x, %s, %s, %s, %s epsilon 1.0e-05 {kernel = #nn.kernel<"batch_norm_onednn", '
            'operands = ["NCHW8c", "C8c", "C8c", "C8c", "C8c"], results = ["NCHW8c"], in_place = 0>} : '
            "(tensor<1x10x4x4xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>) "
            "-> tensor<1x10x4x4xf32>",
            "operand 1 takes 64 bytes in layout 'C8c'; oneDNN's bnorm",
        ),
    ],
)
@pytest.mark.parametrize("backend", ["interpreter", "generated"])
def test_a_kernel_named_for_types_it_cannot_read_is_refused_where_it_is_bound(
    arguments: str, op: str, wrong: str, backend: str
) -> None:
    result = op.rsplit("-> ", 1)[1]
    module = parse(f"""
func.func @f({arguments}) -> {result} {{
  %y = {op}
  func.return %y : {result}
}}""")
    inputs = random_inputs(module)
    if backend == "interpreter":
        compiled = compile_module(module, "onednn", True, "insert-layouts")
        with pytest.raises(DiagnosticError, match=re.escape(wrong)):
            Interpreter(compiled).run(inputs)
    else:  # refused by nnlayout-translate or at load, at the op of the module translated
        compiled = compile_module(module, "onednn", True, "insert-layouts,bufferize,plan-memory")
        with pytest.raises(DiagnosticError, match=re.escape(wrong)):
            run_generated(compiled, inputs)


def test_a_sigmoid_post_op_onednn_runs_without_nan_runs_the_reference_instead() -> None:
    """Dispatch refuses oneDNN's gemm convolutions with a sigmoid post-op (it drops NaN), but
    the formats of a program compiled elsewhere, or named by hand as here (plain, where
    oneDNN picks gemm), may get them at load: NaN became numbers."""
    module = parse("""
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
  %y = nn.fused_conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "sigmoid" {kernel = #nn.kernel<"fused_conv2d_onednn", operands = ["", "", ""], results = [""]>} : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  func.return %y : tensor<1x8x8x8xf32>
}""")
    inputs = random_inputs(module)
    inputs[0][0, 1, 3, 3] = np.nan
    reference = module.clone()
    for op in reference.walk():
        op.attributes.pop("kernel", None)
    expected = Interpreter(reference).run(inputs)
    assert np.isnan(expected[0]).any()
    with pytest.warns(SlowImplementationWarning, match="its sigmoid post-op drops NaN"):
        assert_same(expected, Interpreter(module).run(inputs))


@pytest.mark.parametrize(
    ("activation", "attributes"),
    [("nn.relu", ""), ("nn.clip", "min 0.5 max 6.0 "), ("nn.leaky_relu", "alpha 0.0 ")],
)
@pytest.mark.parametrize("special", [None, np.nan, np.inf, -np.inf])
def test_max_and_min_activations_run_in_onednn_on_finite_inputs_only(
    activation: str, attributes: str, special: float | None
) -> None:
    """oneDNN's relu and clip turn NaN into a bound (leaky_relu with alpha 0 is its relu,
    which also maps -inf to 0 * -inf): they are oneDNN kernels that run the numpy kernel on
    a call whose input is not finite. The activation reads a max pooling (so it is not
    fused into the convolution), on 5 channels: nChw8c with padding lanes on
    onednn-nchw8c."""
    module = parse(f"""
func.func @f(%x: tensor<2x5x6x6xf32>, %w: tensor<5x5x3x3xf32>) -> tensor<2x5x5x5xf32> {{
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x5x6x6xf32>, tensor<5x5x3x3xf32>) -> tensor<2x5x6x6xf32>
  %p = nn.max_pool2d %c kernel [2, 2] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] : tensor<2x5x6x6xf32> -> tensor<2x5x5x5xf32>
  %r = {activation} %p {attributes}: tensor<2x5x5x5xf32>
  func.return %r : tensor<2x5x5x5xf32>
}}""")
    inputs = random_inputs(module)
    if special is not None:
        inputs[0][1, 4, 2, 3] = special
    expected = Interpreter(module).run(inputs)
    for target in ("onednn", "onednn-nchw8c"):
        compiled = check(module, inputs, onednn_ops=3, target=target)
        kernel = kernel_of(next(op for op in compiled.walk() if op.name == activation))
        assert kernel.kernel_name.data == activation[3:] + "_onednn"
        assert_same(
            expected, run_generated(compile_module(module, target, True, DEFAULT_PIPELINE), inputs)
        )


@pytest.mark.parametrize("name", sorted(ZOO))
def test_every_zoo_convolution_runs_the_implementation_it_was_chosen_for(name: str) -> None:
    """The primitive as it is run, built from the layouts on the op's types (post-ops
    included), is oneDNN's fast choice, not ref:any: a brgconv chosen with format `any`
    came back as ref:any once named (a plain destination with a sigmoid post-op)."""
    module = import_model(build(name, small=True), inline_limit=1 << 30).module
    planned = compile_module(module, "onednn", padding=True, pipeline=DEFAULT_PIPELINE)
    convs = [
        op
        for op in planned.walk()
        if isinstance(op, nn.Conv2dOp | nn.FusedConv2dOp | nn.ConvTranspose2dOp) and kernel_of(op)
    ]
    assert convs
    for op in convs:
        implementation = compiled_for(op)[0].pd.implementation
        assert not implementation.startswith("ref"), (op.name, implementation)
        if not isinstance(op, nn.ConvTranspose2dOp):
            assert implementation == conv_chosen(op, get_target("onednn")).implementation


def test_resnet_convolutions_never_keep_a_reference_implementation() -> None:
    module = import_model(build("resnet50", small=True), inline_limit=1 << 30).module
    compiled = compile_module(module, "onednn", padding=True)
    convs = [op for op in compiled.walk() if op.name == "nn.conv2d"]
    assert convs and all(kernel_of(op).kernel_name.data == "conv2d_onednn" for op in convs)
    for op in convs:
        geometry = conv_geometry(op)
        choice = conv_chosen(op, get_target("onednn"))
        assert not choice.implementation.startswith("ref"), choice
        # The primitive as it is run, rebuilt from the layouts now on the op's types, is the
        # one oneDNN chose (1x1 weights named Oihw16o used to get ref:any here).
        tags = [
            format_of(value, role).value
            for value, role in (
                (op.input, "data"),
                (op.weight, geometry.weights_role),
                (op.output, "data"),
            )
        ]
        assert conv_pd(geometry, *tags).implementation == choice.implementation


def deconv_with_weight_argument(c_out: int, kernel: int) -> str:
    """A stride-2 transposed convolution of a 1x8x5x5 input whose weights are an argument."""
    w, y = f"tensor<8x{c_out}x{kernel}x{kernel}xf32>", 4 * 2 + kernel
    out = f"tensor<1x{c_out}x{y}x{y}xf32>"
    return f"""
func.func @f(%x: tensor<1x8x5x5xf32>, %w: {w}) -> {out} {{
  %y = nn.conv_transpose2d %x, %w strides [2, 2] pads [0, 0, 0, 0] output_padding [0, 0] dilations [1, 1] groups 1 : (tensor<1x8x5x5xf32>, {w}) -> {out}
  func.return %y : {out}
}}"""


@contextmanager
def openmp_threads(count: int) -> Iterator[None]:
    """oneDNN's thread count (OpenMP's, which it reads when it creates a primitive) set to
    `count` in this thread, restored afterwards."""
    openmp = ctypes.CDLL("libgomp.so.1")  # the one libdnnl loaded
    before = openmp.omp_get_max_threads()
    openmp.omp_set_num_threads(count)
    try:
        yield
    finally:
        openmp.omp_set_num_threads(before)


@pytest.mark.slow
@pytest.mark.parametrize(("compiled_at", "run_at"), [(2, 1), (1, 2)])
def test_weights_are_repacked_where_the_thread_count_changes_onednns_format(
    compiled_at: int, run_at: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A brgconv blocks its weights by 16 output channels at one thread count and by 24 at
    the other (this 3x3 128->128 convolution at 28x28, as in ResNet-50): a program compiled
    at one count and loaded at the other got ref:any for the weights its types record (1000
    times slower). oneDNN now chooses the weights' format again at load, and the kernel
    repacks them, once per program (they are a load-time constant)."""
    repacks = []
    repacker = calls.weights_repacker

    def counted(op: nn.Conv2dOp, compiled: object) -> object:
        repack = repacker(op, compiled)  # type: ignore[arg-type]
        return None if repack is None else lambda w: repacks.append(1) or repack(w)

    monkeypatch.setattr(calls, "weights_repacker", counted)
    module = parse(
        conv_program(128, 128, 28, 3, "[1, 1]", "[1, 1, 1, 1]", "[1, 1]", 1, 28, batch=1)
    )
    inputs = random_inputs(module)
    expected = Interpreter(module).run(inputs)
    with openmp_threads(compiled_at):
        planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    forget_choices()  # as in a new process
    (op,) = [op for op in planned.walk() if op.name == "nn.conv2d"]
    geometry = conv_geometry(op)
    tags = [
        format_of(value, role).value
        for value, role in (
            (op.input, "data"),
            (op.weight, geometry.weights_role),
            (op.output, "data"),
        )
    ]
    try:
        with openmp_threads(run_at):
            recorded = conv_pd(geometry, *tags).implementation
            if not recorded.startswith("ref"):
                pytest.skip(f"oneDNN keeps this format at {run_at} thread(s) here: {recorded}")
            assert not compiled_for(op)[0].pd.implementation.startswith("ref")
            interpreter = Interpreter(planned)
            for _ in range(3):
                assert_same(expected, interpreter.run(inputs))
            generated = import_generated(translate(planned, tmp_path / "model.py").code)
            for _ in range(3):
                assert_same(expected, generated.run(*inputs))
            assert len(repacks) == 2  # one per program
    finally:
        forget_choices()


def test_a_program_loaded_on_a_cpu_with_fewer_features_runs_no_onednn_reference_code(
    tmp_path: Path,
) -> None:
    """Loaded where oneDNN may use SSE4.1 only (ONEDNN_MAX_CPU_ISA, as on an older CPU), the
    transposed convolution compiled for AVX2's nChw8c gets conv:any+ref:any, about 100 times
    slower than numpy: nnlayout's reference kernel runs it, with one warning that says so."""
    module = parse(deconv_with_weight_argument(8, 2))
    planned = compile_module(module, "onednn-nchw8c", True, DEFAULT_PIPELINE)
    translate(planned, tmp_path / "model.py")
    inputs = random_inputs(module)
    np.save(tmp_path / "expected.npy", Interpreter(module).run(inputs)[0])
    np.savez(tmp_path / "inputs.npz", *inputs)
    script = (
        "import numpy as np, model\n"
        "from nnlayout.kernels.onednn import primitives\n"
        "inputs = np.load('inputs.npz')\n"
        "(y,) = model.run(*(inputs[k] for k in sorted(inputs.files)))\n"
        "np.testing.assert_allclose(y, np.load('expected.npy'), rtol=1e-5, atol=1e-5)\n"
        "print(sorted(c.pd.implementation for c in primitives._CACHE.values()))\n"
        "from nnlayout.reports.census import library_implementation\n"
        "(op,) = [op for op in model.PROGRAM.function.walk() if op.name == 'nn.compute'"
        " and op.inner.name == 'nn.conv_transpose2d']\n"
        "print(library_implementation(op))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "ONEDNN_MAX_CPU_ISA": "SSE41"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "['conv:any+ref:any']\nnumpy (oneDNN: conv:any+ref:any)\n"
    assert (
        result.stderr.count(
            "SlowImplementationWarning: nn.conv_transpose2d: oneDNN offers "
            "only conv:any+ref:any here"
        )
        == 1
    )


POOLED_CONV = """
func.func @f(%x: tensor<1x64x16x16xf32>) -> tensor<1x64x8x8xf32> {
  %w = nn.constant dense<0.01> : tensor<64x64x3x3xf32>
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x64x16x16xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x16x16xf32>
  %r = nn.relu %c : tensor<1x64x16x16xf32>
  %p = nn.max_pool2d %r kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x64x16x16xf32> -> tensor<1x64x8x8xf32>
  func.return %p : tensor<1x64x8x8xf32>
}"""


@pytest.mark.onednn_avx512
@pytest.mark.parametrize("backend", ["interpreter", "generated"])
def test_pooling_compiled_for_avx512_runs_where_onednn_has_no_fast_code_for_it(
    tmp_path: Path, backend: str
) -> None:
    """Loaded with oneDNN on AVX2, the max pooling compiled for nChw16c has only ref:any: it
    runs in numpy with a warning, like a convolution. Checking at binding whether oneDNN
    has fast code for the op's layout refused it ("oneDNN chose ref:any for nChw16c data")."""
    module = parse(POOLED_CONV)
    planned = compile_module(module, "onednn-nchw16c", True, DEFAULT_PIPELINE)
    (tmp_path / "planned.mlir").write_text(str(planned))
    inputs = random_inputs(module)
    np.save(tmp_path / "x.npy", inputs[0])
    np.save(tmp_path / "expected.npy", Interpreter(module).run(inputs)[0])
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "nnlayout.tools.run",
            "planned.mlir",
            "--input",
            "x.npy",
            "--output-dir",
            "out",
            "--backend",
            backend,
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "ONEDNN_MAX_CPU_ISA": "AVX2"},
    )
    assert result.returncode == 0, result.stderr
    assert "nn.max_pool2d: oneDNN offers only ref:any here" in result.stderr
    np.testing.assert_allclose(
        np.load(tmp_path / "out" / "result0.npy"),
        np.load(tmp_path / "expected.npy"),
        rtol=1e-5,
        atol=1e-5,
    )


def test_two_interpreters_of_one_program_run_in_two_threads() -> None:
    """Each calls the oneDNN kernels on arrays of its own: their primitives' memory objects,
    re-pointed on every call, were shared, so one thread ran on the other's arrays."""
    module = parse(
        conv_program(
            16,
            16,
            24,
            3,
            "[1, 1]",
            "[1, 1, 1, 1]",
            "[1, 1]",
            1,
            24,
            then="%r = nn.relu %c : tensor<2x16x24x24xf32>\n  func.return %r",
        )
    )
    compiled = compile_module(module, "onednn", padding=True)
    inputs = [[x * (k + 1) for x in random_inputs(module)] for k in range(2)]
    expected = [Interpreter(module).run(xs) for xs in inputs]

    def check(k: int) -> None:
        interpreter = Interpreter(compiled)
        for _ in range(20):
            assert_same(expected[k], interpreter.run(inputs[k]))

    with ThreadPoolExecutor(2) as pool:
        for future in [pool.submit(check, k) for k in range(2)]:
            future.result()


@pytest.mark.parametrize("name", tiered(sorted(ZOO), ["resnet50", "unet"]))
def test_small_zoo_models_keep_their_results(name: str) -> None:
    """With and without channel padding; concats, residual adds, depthwise convolutions,
    batch norms, poolings, relus, clips and transposed convolutions run in oneDNN, the rest
    in numpy, with reorders between."""
    module = import_model(build(name, small=True), inline_limit=1 << 30).module
    check_semantics(module, random_inputs(module), targets=["onednn"])


def test_host_target_is_onednn_here() -> None:
    assert get_target("host").families == get_target("onednn").families


def test_dilated_max_pool_falls_back_naming_ref() -> None:
    """oneDNN pools dilated windows of nchw data with ref:any: refused, numpy runs it."""
    from nnlayout.kernels.onednn.any_layout import any_accepts

    module = parse(
        POOL.format(
            c=8, size=11, out=5, kind="max_pool2d", extra="", k=3, s=2, pads="[1, 1, 1, 1]"
        ).replace("dilations [1, 1]", "dilations [2, 2]")
    )
    (pool,) = [op for op in module.walk() if op.name == "nn.max_pool2d"]
    assert any_accepts(pool, get_target("onednn"), True) == "oneDNN chose ref:any for nchw data"
    check(module, random_inputs(module), onednn_ops=0)


def test_a_reference_implementation_is_refused_and_the_stem_retried(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Forcing oneDNN's 'any' source to nChw8c reproduces the slow stem (ref:any for 3
    padded channels): the kernel says so, then retries with other sources (nchw, then the
    same channels-last format in and out)."""
    from nnlayout.kernels.onednn import convolution
    from nnlayout.kernels.onednn.formats import by_layout

    blocked = by_layout("data", "NCHW8c").value
    real = convolution.conv_pd

    def forced(g, src, weights, dst, only_blocked=False):
        return real(g, blocked if src == ANY or only_blocked else src, weights, dst)

    module = parse(conv_program(3, 16, 12, 3, "[1, 1]", "[1, 1, 1, 1]", "[1, 1]", 1, 12))
    (op,) = [op for op in module.walk() if op.name == "nn.conv2d"]
    geometry = conv_geometry(op)
    try:
        monkeypatch.setattr(convolution, "conv_pd", forced)
        conv_choice.cache_clear()
        choice = conv_choice(geometry)
        assert not isinstance(choice, str) and choice.formats[0].value != blocked
        assert not choice.implementation.startswith("ref")
        monkeypatch.setattr(convolution, "conv_pd", lambda *a: forced(*a, only_blocked=True))
        conv_choice.cache_clear()
        reason = conv_choice(geometry)
        assert isinstance(reason, str)
        assert "oneDNN chose ref:any for a 3-channel nChw8c source" in reason
        target = get_target("onednn")
        assert convolution.conv_accepts(op, target, True) == reason
    finally:
        conv_choice.cache_clear()


def test_a_second_run_creates_no_primitive() -> None:
    from nnlayout.kernels.onednn.primitives import cache_size

    module = parse(conv_program(8, 16, 9, 3, "[1, 1]", "[1, 1, 1, 1]", "[1, 1]", 1, 9))
    compiled = compile_module(module, "onednn", padding=True)
    inputs = random_inputs(module)
    first = Interpreter(compiled).run(inputs)
    size = cache_size()
    np.testing.assert_array_equal(Interpreter(compiled).run(inputs)[0], first[0])
    assert cache_size() == size


def test_padding_lanes_stay_zero_when_nan_meets_padded_weights() -> None:
    """A 5-channel nChw8c result: 0 * NaN in the 3 padded output channels must not stay."""
    from xdsl.dialects.builtin import NoneAttr, TensorType, f32
    from xdsl.utils.test_value import create_ssa_value

    from nnlayout.dialects import nn
    from nnlayout.dialects.layout import LayoutAttr, LayoutSpec
    from nnlayout.kernels.onednn.prepared import run

    def tensor(shape, layout=""):
        return TensorType(f32, shape, LayoutAttr(layout) if layout else NoneAttr())

    rng = np.random.default_rng(5)
    x, w, bias = (
        rng.standard_normal(s).astype(np.float32) for s in ((1, 3, 8, 8), (5, 3, 3, 3), (5,))
    )
    x[0, 1, 3, 3] = np.nan
    plain = [create_ssa_value(tensor(a.shape)) for a in (x, w, bias)]
    reference_op = nn.Conv2dOp(*plain, pads=[1, 1, 1, 1])
    operands = [plain[0], create_ssa_value(tensor(w.shape, "OHWI8o")), plain[2]]
    op = nn.Conv2dOp.create(
        operands=operands,
        properties=dict(reference_op.properties),
        result_types=[tensor((1, 5, 8, 8), "NCHW8c")],
    )
    out = run(op, [x, LayoutSpec.parse("OHWI8o").pack(w), bias])
    spec = LayoutSpec.parse("NCHW8c")
    assert (out[spec.padding_mask((1, 5, 8, 8))] == 0).all()
    want = REFERENCE_KERNELS[nn.Conv2dOp](reference_op, [x, w, bias])
    assert_same((want,), (spec.unpack(out, (1, 5, 8, 8)),))


@pytest.mark.parametrize(
    ("c_in", "c_out", "k", "strides", "pads", "output_padding", "groups", "size", "out"),
    [
        (8, 4, 2, "[2, 2]", "[0, 0, 0, 0]", "[0, 0]", 1, 8, 16),  # UNet's up-sampling
        (6, 9, 3, "[2, 2]", "[1, 1, 1, 1]", "[1, 1]", 1, 7, 14),
        (8, 8, 3, "[1, 1]", "[1, 1, 1, 1]", "[0, 0]", 2, 9, 9),
        (4, 4, 3, "[2, 2]", "[0, 0, 0, 0]", "[1, 1]", 1, 5, 12),  # output_padding past the pads
        (4, 4, 3, "[2, 2]", "[1, 1, 0, 0]", "[0, 0]", 1, 5, 10),
    ],
)
def test_transposed_convolutions(
    c_in: int,
    c_out: int,
    k: int,
    strides: str,
    pads: str,
    output_padding: str,
    groups: int,
    size: int,
    out: int,
) -> None:
    """oneDNN's deconvolution, its weights packed from ONNX's (i, o, h, w) once, on plain,
    NaN and Inf inputs, in the interpreter and the generated module."""
    w = f"tensor<{c_in}x{c_out // groups}x{k}x{k}xf32>"
    x, y = f"tensor<2x{c_in}x{size}x{size}xf32>", f"tensor<2x{c_out}x{out}x{out}xf32>"
    module = parse(f"""
func.func @f(%x: {x}) -> {y} {{
  %w = nn.constant dense<{dense((c_in, c_out // groups, k, k), 1)}> : {w}
  %b = nn.constant dense<{dense((c_out,), 2)}> : tensor<{c_out}xf32>
  %y = nn.conv_transpose2d %x, %w, %b strides {strides} pads {pads} output_padding {output_padding} dilations [1, 1] groups {groups} : ({x}, {w}, tensor<{c_out}xf32>) -> {y}
  func.return %y : {y}
}}""")
    inputs = random_inputs(module)
    inputs[0][0, 0, 0, :3] = [np.nan, np.inf, -np.inf]
    compiled = check(module, inputs, onednn_ops=1)
    assert [
        kernel_of(op).kernel_name.data for op in compiled.walk() if op.name == "nn.conv_transpose2d"
    ] == ["conv_transpose2d_onednn"]
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    expected = Interpreter(module).run(inputs)
    assert_same(expected, run_generated(planned, inputs))
    assert_same(expected, run_generated(planned, inputs))  # packed weights reused


def test_transposed_convolution_weights_passed_as_an_argument_are_packed_on_every_call(
    tmp_path: Path,
) -> None:
    """Only a load-time constant is packed once: weights that are a function argument may
    hold other values on the next call (here the same array, changed in place), in the
    interpreter and in a generated module (which passes its arena views again)."""
    module = parse(deconv_with_weight_argument(4, 3))
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    assert [
        kernel_of(op).kernel_name.data for op in planned.walk() if op.name == "nn.conv_transpose2d"
    ] == ["conv_transpose2d_onednn"]
    x, weights = random_inputs(module)
    interpreter = Interpreter(planned)
    generated = import_generated(translate(planned, tmp_path / "model.py").code)
    interpreter.run([x, weights])
    generated.run(x, weights)
    weights *= -2
    expected = Interpreter(module).run([x, weights])
    assert_same(expected, interpreter.run([x, weights]))
    assert_same(expected, generated.run(x, weights))


def gemm_program(
    trans_a: bool,
    trans_b: bool,
    c_shape: tuple[int, ...] | None,
    alpha: float = 1.0,
    beta: float = 1.0,
) -> str:
    m, k, n = 3, 40, 24
    a = f"tensor<{k}x{m}xf32>" if trans_a else f"tensor<{m}x{k}xf32>"
    b = f"tensor<{n}x{k}xf32>" if trans_b else f"tensor<{k}x{n}xf32>"
    c = None if c_shape is None else f"tensor<{'x'.join(map(str, c_shape))}xf32>"
    operands = "%a, %b" + (", %c" if c else "")
    flags = (" trans_a" if trans_a else "") + (" trans_b" if trans_b else "")
    return f"""
func.func @f(%a: {a}, %b: {b}{f", %c: {c}" if c else ""}) -> tensor<{m}x{n}xf32> {{
  %y = nn.gemm {operands}{flags} alpha {alpha} beta {beta} : ({", ".join(t for t in (a, b, c) if t)}) -> tensor<{m}x{n}xf32>
  func.return %y : tensor<{m}x{n}xf32>
}}"""


@pytest.mark.parametrize(
    "trans_a, trans_b, c_shape",
    [(False, True, (24,)), (True, False, (1, 24)), (True, True, None), (False, False, (24,))],
)
def test_gemm_runs_as_onednn_matmul(
    trans_a: bool, trans_b: bool, c_shape: tuple[int, ...] | None
) -> None:
    """Transposes are strides of oneDNN's matmul, c its bias row: same results (NaN too)."""
    module = parse(gemm_program(trans_a, trans_b, c_shape))
    inputs = random_inputs(module)
    inputs[0][0, 0] = np.nan
    compiled = check(module, inputs, onednn_ops=1)
    (gemm,) = [op for op in compiled.walk() if op.name == "nn.gemm"]
    assert kernel_of(gemm).kernel_name.data == "gemm_onednn"


@pytest.mark.parametrize("trans_a, c_shape", [(False, (24,)), (True, None)])
@pytest.mark.parametrize("constant", [True, False])
def test_a_constant_b_read_transposed_is_stored_transposed(
    constant: bool, trans_a: bool, c_shape: tuple[int, ...] | None
) -> None:
    """A dense layer's weights (a constant b with trans_b, as ONNX's Gemm holds them) are
    stored at compile time, the constant reordered and folded: in the inner product's own
    format (a fully connected layer), or, read by a matmul (trans_a), K x N (layout IO) so
    that it reads rows rather than swapped strides; a b given at run time keeps its
    strides. Same results, interpreter and generated module (NaN too)."""
    text = gemm_program(trans_a, True, c_shape)
    if constant:
        text = re.sub(
            r"(, )?%b: tensor<24x40xf32>(, )?", lambda m: m[1] and m[2] or "", text
        ).replace(
            "{\n  %y",
            f"{{\n  %b = nn.constant dense<{dense((24, 40), 5)}> : tensor<24x40xf32>\n  %y",
        )
    module = parse(text)
    inputs = random_inputs(module)
    inputs[0][1, 2] = np.nan
    compiled = check(module, inputs, onednn_ops=1)
    (gemm,) = [op for op in compiled.walk() if op.name == "nn.gemm"]
    layout = "IO" if trans_a else fc_weights_layout(gemm)
    assert layout not in ("", "OI")
    assert kernel_of(gemm).operands[1] == (layout if constant else "")
    stored = [
        op
        for op in compiled.walk()
        if isinstance(op, nn.ConstantOp) and encoding_name(op.results[0].type) == layout
    ]
    assert len(stored) == constant
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    assert_same(Interpreter(module).run(inputs), run_generated(planned, inputs))


@pytest.mark.parametrize("trans_a", [False, True])
def test_a_gemm_declares_the_scratchpad_of_either_storage_of_b(trans_a: bool) -> None:
    """The kernel asks for b stored transposed (IO) or in the inner product's format, but a
    pipeline without insert-layouts (`select-dispatch` alone, run by the interpreter) leaves
    it plain: the matmul reads it through swapped strides, whose scratchpad is larger (it
    repacks b), the inner product reorders it at load; the declared workspace holds the
    scratchpad used either way."""
    text = (
        gemm_program(trans_a, True, (24,))
        .replace("%b: tensor<24x40xf32>, ", "")
        .replace(
            "{\n  %y",
            f"{{\n  %b = nn.constant dense<{dense((24, 40), 5)}> : tensor<24x40xf32>\n  %y",
        )
    )
    module = parse(text)
    inputs = random_inputs(module)
    for pipeline in ("select-dispatch{{target={target} padding={padding}}}", LAYOUT_PIPELINE):
        compiled = compile_module(module, "onednn", True, pipeline)
        (gemm,) = [op for op in compiled.walk() if op.name == "nn.gemm"]
        assert kernel_of(gemm).operands[1] == ("IO" if trans_a else fc_weights_layout(gemm))
        used = compiled_for(gemm)[0].scratchpad_bytes
        assert kernel_of(gemm).workspace.data >= used, (pipeline, used)
        assert_same(Interpreter(module).run(inputs), Interpreter(compiled).run(inputs))


@pytest.mark.parametrize(
    "alpha, beta, c_shape, reason",
    [
        (2.0, 1.0, (24,), "alpha 2.0"),
        (1.0, 0.5, (24,), "beta 0.5"),
        (1.0, 1.0, (3, 24), "c of shape [3, 24]"),
        (1.0, 1.0, (1,), "c of shape [1]"),
    ],
)
def test_gemm_onednn_refuses_what_its_matmul_does_not_compute(
    alpha: float, beta: float, c_shape: tuple[int, ...], reason: str
) -> None:
    module = parse(gemm_program(False, True, c_shape, alpha, beta))
    (gemm,) = [op for op in module.walk() if op.name == "nn.gemm"]
    assert reason in gemm_accepts(gemm, get_target("onednn"), True)
    compiled = compile_module(module, "onednn", padding=True)
    (gemm,) = [op for op in compiled.walk() if op.name == "nn.gemm"]
    assert kernel_of(gemm).kernel_name.data == "gemm_ref"
    assert_same(
        Interpreter(module).run(random_inputs(module)),
        Interpreter(compiled).run(random_inputs(module)),
    )


def fused_residual_conv(activation: str = "") -> tuple[nn.FusedConv2dOp, np.ndarray, np.ndarray]:
    """A convolution fused with its residual add (and `activation`, e.g. "nn.relu") for
    oneDNN, with its weights and bias."""
    t = "tensor<1x8x6x6xf32>"
    result = "%y" if activation else "%s"
    module = parse(f"""
func.func @f(%x: {t}, %r: {t}) -> {t} {{
  %w = nn.constant dense<{dense((8, 8, 3, 3), 3)}> : tensor<8x8x3x3xf32>
  %b = nn.constant dense<{dense((8,), 4)}> : tensor<8xf32>
  %c = nn.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : ({t}, tensor<8x8x3x3xf32>, tensor<8xf32>) -> {t}
  %s = nn.add %c, %r : ({t}, {t}) -> {t}
  {f"%y = {activation} %s : {t}" if activation else ""}
  func.return {result} : {t}
}}""")
    fused = compile_module(
        module,
        "onednn",
        True,
        "select-dispatch{{target={target}}},fuse-post-ops{{target={target}}}",
    )
    [op] = [op for op in fused.walk() if isinstance(op, nn.FusedConv2dOp)]
    weights, bias = (
        np.asarray(json.loads(dense(shape, seed)), np.float32)
        for shape, seed in (((8, 8, 3, 3), 3), ((8,), 4))
    )
    return op, weights, bias


def test_a_prepared_kernel_follows_its_buffers_from_call_to_call() -> None:
    """A prepared kernel given other buffers from call to call, the addend in place one call
    and not the next, and new contents in the same buffers, computes each call's result."""
    op, weights, bias = fused_residual_conv()
    bound = Prepared(op, None)
    rng = np.random.default_rng(5)
    x, r, other = (rng.standard_normal((1, 8, 6, 6)).astype(np.float32) for _ in range(3))
    out = np.empty_like(x)
    for step in range(6):
        in_place = step in (2, 3)
        addend = other if in_place else r
        expected = REFERENCE_KERNELS[nn.FusedConv2dOp](op, [x, weights, bias, addend])
        bound([x, weights, bias, addend], addend if in_place else out)
        np.testing.assert_allclose(addend if in_place else out, expected, rtol=1e-5, atol=1e-5)
        x[0, step, 2, 2] += 1.0  # new contents in the same buffer
        if step == 4:
            x = x.copy()  # another buffer
        other[...] = rng.standard_normal(other.shape)


def test_a_kernel_bound_to_its_buffers_runs_on_them_between_other_calls() -> None:
    """`Prepared.on` binds a kernel to the arrays it will always be given; calls of the same
    kernel on other arrays in between (in place or not) do not leave it pointing elsewhere,
    and new contents of its arrays are read on every call."""
    op, weights, bias = fused_residual_conv("nn.relu")
    prepared = Prepared(op, None)
    rng = np.random.default_rng(6)
    x, r, x2, r2 = (rng.standard_normal((1, 8, 6, 6)).astype(np.float32) for _ in range(4))
    out, in_place = np.empty_like(x), r2  # the second binding accumulates into its addend
    fixed = prepared.on([x, weights, bias, r], out)
    fixed_in_place = prepared.on([x2, weights, bias, r2], in_place)
    strided = np.empty((1, 8, 6, 12), np.float32)[..., ::2]  # not oneDNN's: copied into
    fixed_strided = prepared.on([x, weights, bias, r], strided)

    def expect(source: np.ndarray, addend: np.ndarray) -> np.ndarray:
        return REFERENCE_KERNELS[nn.FusedConv2dOp](op, [source, weights, bias, addend])

    for step in range(4):
        x[0, step, 1, 1] = np.nan if step == 2 else x[0, step, 1, 1] + 1.0
        r[0, step, 3, 3] += 2.0
        wanted = expect(x, r)
        fixed()
        np.testing.assert_allclose(out, wanted, rtol=1e-5, atol=1e-5)
        other_out = np.empty_like(x)
        prepared([x2, weights, bias, r], other_out)  # other arrays, by the same kernel
        np.testing.assert_allclose(other_out, expect(x2, r), rtol=1e-5, atol=1e-5)
        r2[...] = rng.standard_normal(r2.shape)
        wanted_in_place = expect(x2, r2)
        fixed_in_place()
        np.testing.assert_allclose(in_place, wanted_in_place, rtol=1e-5, atol=1e-5)
        fixed_strided()
        np.testing.assert_allclose(strided, wanted, rtol=1e-5, atol=1e-5)
        fixed()
        np.testing.assert_allclose(out, wanted, rtol=1e-5, atol=1e-5)
        out.fill(7.0)
        prepared([x, weights, bias, r], out)  # the bound arrays, passed again
        np.testing.assert_allclose(out, wanted, rtol=1e-5, atol=1e-5)


def test_the_zoo_table_marks_every_implementation_that_is_not_onednns_fast_code() -> None:
    from nnlayout.benchmarks.zoo_latency import counts

    assert counts(
        {
            "jit:avx2": 3,
            "conv:any+ref:any": 1,
            "numpy (oneDNN: ref:any)": 2,
            "ref:any": 1,
            "conv:any+jit:avx2": 1,
        },
        mark_ref=True,
    ) == (
        "jit:avx2 x3, REF numpy (oneDNN: ref:any) x2, conv:any+jit:avx2 x1, "
        "REF conv:any+ref:any x1, REF ref:any x1"
    )


def test_the_implementations_benchmark_times_what_the_target_chooses(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`benchmarks/onednn_implementations` lists, per convolution, oneDNN's implementations
    with the first (*) and the target's (>) marked, and totals for both."""
    from nnlayout.benchmarks import onednn_implementations

    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(variable, "1")  # restored after the test (main pins them)
    assert onednn_implementations.main(["resnet50", "--small", "--repeats", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split(": ", 1)[1].split("  ") for line in lines if " x " in line]
    assert len(rows) > 5
    preferred = OneDNNOptions.of(get_target("onednn")).preferred_implementations
    for cells in rows:
        (first,) = [cell for cell in cells if cell.startswith("*")]
        (chosen,) = [cell for cell in cells if cell.lstrip("*").startswith(">")]
        assert chosen == first or chosen[1:].startswith(preferred)
    assert lines[-1].startswith("total, ms: oneDNN's first ")
    assert onednn_implementations.main(["no_such_model"]) == 1
