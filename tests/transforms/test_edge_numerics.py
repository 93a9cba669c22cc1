"""Numerics at the edges, through the whole `default-pipeline` (every target, padding on and
off): NaN and Inf in the input come out exactly where the unoptimised program puts them, so
padding lanes never turn a NaN into a number nor a number into a NaN; and an empty batch
(N = 0) is refused clearly by every tool."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from onnx import helper

from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    assert_one_clean_error,
    onnx_file,
    onnx_model,
    run_in_process,
)
from nnlayout.tests.random_programs import check_program, compile_text


def weights(shape: tuple[int, ...], seed: int) -> str:
    return json.dumps(np.random.default_rng(seed).uniform(-1, 1, shape).round(3).tolist())


def conv(x: str, w: str, c: int, o: int, size: int, name: str, seed: int) -> str:
    """A 3x3, pad-1 convolution from `x` (1 x c x size x size) to `name` (o channels)."""
    return (
        f"  %{w} = nn.constant dense<{weights((o, c, 3, 3), seed)}> : tensor<{o}x{c}x3x3xf32>\n"
        f"  %{name} = nn.conv2d %{x}, %{w} strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : "
        f"(tensor<1x{c}x{size}x{size}xf32>, tensor<{o}x{c}x3x3xf32>) -> tensor<1x{o}x{size}x{size}xf32>\n"
    )


# Each program starts with a blocked convolution (3 -> 17 channels, padded to 24 or 32 lanes),
# so that what follows sees NaN and Inf in real lanes next to padding lanes.
HEAD = "func.func @f(%x: tensor<1x3x12x12xf32>) -> {result} {{\n" + conv(
    "x", "w0", 3, 17, 12, "c", 0
)
T17 = "tensor<1x17x12x12xf32>"
PROGRAMS = {
    "conv": ("tensor<1x5x12x12xf32>", conv("c", "w1", 17, 5, 12, "y", 1)),
    "max-pool": (
        "tensor<1x17x7x7xf32>",
        f"  %y = nn.max_pool2d %c kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] ceil_mode : {T17} -> tensor<1x17x7x7xf32>\n",
    ),
    "avg-pool": (
        "tensor<1x17x7x7xf32>",
        f"  %y = nn.avg_pool2d %c kernel [2, 2] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] count_include_pad : {T17} -> tensor<1x17x7x7xf32>\n",
    ),
    "softmax": (T17, f"  %y = nn.softmax %c axis 1 : {T17}\n"),
    "concat": (
        "tensor<1x5x12x12xf32>",
        f"  %n = nn.neg %c : {T17}\n"
        f"  %cat = nn.concat %c, %n, %x axis 1 : ({T17}, {T17}, tensor<1x3x12x12xf32>) -> tensor<1x37x12x12xf32>\n"
        + conv("cat", "w1", 37, 5, 12, "y", 2),
    ),
    "batch-norm-sigmoid": (
        T17,
        f"  %s = nn.constant dense<0.5> : tensor<17xf32>\n"
        f"  %v = nn.constant dense<2.0> : tensor<17xf32>\n"
        f"  %b = nn.batch_norm %c, %s, %s, %s, %v epsilon 1.0e-05 : ({T17}, tensor<17xf32>, tensor<17xf32>, tensor<17xf32>, tensor<17xf32>) -> {T17}\n"
        f"  %y = nn.sigmoid %b : {T17}\n",
    ),
}


def program(name: str) -> str:
    result, body = PROGRAMS[name]
    return HEAD.format(result=result) + body + f"  func.return %y : {result}\n}}\n"


def poisoned_input() -> np.ndarray:
    """NaN, Inf and -Inf in each channel, at a corner (next to the convolution's zero
    border), an edge and inside, plus a window that is entirely -Inf."""
    x = np.random.default_rng(9).standard_normal((1, 3, 12, 12)).astype(np.float32)
    x[0, 0, 0, 0] = np.nan
    x[0, 1, 5, 6] = np.inf
    x[0, 2, 11, 3] = -np.inf
    x[0, :, 8:11, 8:11] = -np.inf
    return x


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_nan_and_inf_propagate_exactly(name: str) -> None:
    text = program(name)
    x = poisoned_input()
    (expected,) = Interpreter(parse_module(make_context(), text, name)).run([x])
    assert np.isnan(expected).any()  # the test means something: NaNs reach the output
    compiled = compile_text(text, "avx512", True)
    conv = next(op for op in compiled.walk() if op.name == "nn.conv2d")
    assert kernel_of(conv).kernel_name.data == "conv2d_nchwc"  # and padding lanes exist
    check_program(text, inputs=[x])


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_a_whole_input_of_one_special_value(value: float) -> None:
    check_program(program("concat"), inputs=[np.full((1, 3, 12, 12), value, np.float32)])


T8 = "tensor<1x8x4x4xf32>"
EDGE_VALUES = {
    # 1 / -x: the sign of a zero becomes the sign of an infinity (oneDNN computed -x as
    # -1 x + 0, which makes -(+0) +0).
    "signed-zero": (
        f"  %one = nn.constant dense<1.0> : {T8}\n  %n = nn.neg %x : {T8}\n"
        f"  %y = nn.div %one, %n : ({T8}, {T8}) -> {T8}\n",
        T8,
        np.where(np.arange(128).reshape(1, 8, 4, 4) % 2, 0.0, -0.0),
    ),
    # A mean of values whose float32 sum overflows (oneDNN's global average pooling sums in
    # float32, the reference in float64).
    "global-average-of-huge": (
        f"  %y = nn.global_avg_pool %x : {T8} -> tensor<1x8x1x1xf32>\n",
        "tensor<1x8x1x1xf32>",
        np.full((1, 8, 4, 4), 3e38),
    ),
}


@pytest.mark.parametrize("name", sorted(EDGE_VALUES))
def test_edge_values_keep_their_results_on_every_target(name: str) -> None:
    body, result, x = EDGE_VALUES[name]
    text = f"func.func @f(%x: {T8}) -> {result} {{\n{body}  func.return %y : {result}\n}}\n"
    check_program(text, inputs=[x.astype(np.float32)])


# ----------------------------------------------------------- empty batch (N = 0)
EMPTY = (
    "func.func @f(%x: tensor<0x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<0x4x6x6xf32> {\n"
    "  %y = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : "
    "(tensor<0x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<0x4x6x6xf32>\n"
    "  func.return %y : tensor<0x4x6x6xf32>\n}\n"
)


@pytest.mark.parametrize("tool", ["nnlayout-opt", "nnlayout-run", "nnlayout-import"])
def test_empty_batch_is_refused_by_every_tool(
    tool: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "empty.mlir"
    path.write_text(EMPTY)
    expected = (
        f"{path}:2:3: error: nn.conv2d: operand 0 has a zero-size dimension "
        "(tensor<0x3x8x8xf32>); empty tensors are not supported"
    )
    if tool == "nnlayout-opt":
        args = [str(path), "-p", "default-pipeline"]
    elif tool == "nnlayout-run":
        args = [str(path), "--random-inputs", "0", "--output-dir", str(tmp_path / "out")]
    else:
        model = onnx_model(
            [helper.make_node("Conv", ["x", "w"], ["y"])],
            {"x": [0, 3, 8, 8]},
            ["y"],
            {"w": np.ones((4, 3, 3, 3), np.float32)},
        )
        args = onnx_file(model)(tmp_path)
        expected = (
            "error: graph input 'x' has a zero-size dimension 0; empty tensors are not supported"
        )
    status, out, err = run_in_process(tool, args, capsys, monkeypatch)
    assert_one_clean_error(status, out, err, expected)
