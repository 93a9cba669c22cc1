"""The oneDNN kernels against the reference kernels, end to end: each program is run by the
reference interpreter and again after `select-dispatch{target=onednn}, insert-layouts,
propagate-layouts, fold-constants`, which runs the chosen oneDNN kernels on packed values
(the helpers of tests/helpers.py). Each test also checks that oneDNN kernels were
chosen, so that a silent fallback to numpy cannot pass for oneDNN. Convolutions (grouped,
transposed, the stem), pooling, batch norm, broadcasting binary ops and concat, with NaN,
infinities and padding lanes. Its helpers `check`, `conv_program`, `conv_tags` and
`deconv_with_weight_argument` serve test_onednn_fallbacks, _implementations,
_bound_kernels and _gemm."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import LayoutAttr, LayoutSpec
from nnlayout.kernels.onednn.common import format_of
from nnlayout.kernels.onednn.convolution import ConvGeometry, conv_choice, conv_geometry
from nnlayout.kernels.onednn.eltwise import binary_reason
from nnlayout.kernels.onednn.prepared import compiled_for
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.targets import get_target
from nnlayout.lowering.to_numpy import import_generated, run_generated, translate
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    activation_reorders,
    assert_same,
    compile_module,
    dense,
    parse,
    random_inputs,
)

pytestmark = pytest.mark.onednn


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


def conv_tags(op: nn.Conv2dOp, geometry: ConvGeometry) -> list[int]:
    """oneDNN's format tags of the convolution's input, weights and result as the layouts on
    its types name them: the primitive as it is run."""
    return [
        format_of(value, role).value
        for value, role in (
            (op.input, "data"),
            (op.weight, geometry.weights_role),
            (op.output, "data"),
        )
    ]


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


def deconv_with_weight_argument(c_out: int, kernel: int) -> str:
    """A stride-2 transposed convolution of a 1x8x5x5 input whose weights are an argument."""
    w, y = f"tensor<8x{c_out}x{kernel}x{kernel}xf32>", 4 * 2 + kernel
    out = f"tensor<1x{c_out}x{y}x{y}xf32>"
    return f"""
func.func @f(%x: tensor<1x8x5x5xf32>, %w: {w}) -> {out} {{
  %y = nn.conv_transpose2d %x, %w strides [2, 2] pads [0, 0, 0, 0] output_padding [0, 0] dilations [1, 1] groups 1 : (tensor<1x8x5x5xf32>, {w}) -> {out}
  func.return %y : {out}
}}"""


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
