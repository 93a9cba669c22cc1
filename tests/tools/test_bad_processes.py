"""The tools as real processes (their console scripts' entry, `python -m`) on bad input: one
case per tool, and bytes on stdin that are no MLIR text (an ONNX model, not UTF-8, a control
character) or a closed stdin. Each ends in one short error, exit status 1, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nnlayout.tests.helpers import TOOLS, assert_one_clean_error
from nnlayout.tests.tools.test_bad_files import RELU, onnx_bytes

pytestmark = pytest.mark.slow  # bad files through real processes (full tier)

MODULES = {
    "nnlayout-opt": "nnlayout.tools.opt",
    "nnlayout-run": "nnlayout.tools.run",
    "nnlayout-import": "nnlayout.tools.import_onnx",
    "nnlayout-translate": "nnlayout.tools.translate",
}


# One case per tool as a real process: (file name, its text, arguments after it, the first line).
REAL_PROCESS_CASES = {
    "nnlayout-opt": (
        "conv-channels.mlir",
        """func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}
""",
        [],
        "{file}:2:3: error: nn.conv2d: input has 3 channels but weight expects 4 (groups=1)",
    ),
    "nnlayout-run": (
        "1e12-element-input.mlir",
        """func.func @f(%x: tensor<1000000x1000000xf32>) -> tensor<1000000x1000000xf32> {
  %0 = nn.relu %x : tensor<1000000x1000000xf32>
  func.return %0 : tensor<1000000x1000000xf32>
}
""",
        ["--random-inputs", "0"],
        "error: argument 1 (%x): [1000000, 1000000] float32 needs 4,000,000,000,000 bytes (3.6 TiB), more than this machine's memory",
    ),
    "nnlayout-translate": (
        "retyped-operand.mlir",
        """func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu %x : tensor<3xf32>
  func.return %0 : tensor<2xf32>
}
""",
        [],
        "{file}:2:16: error: operand is used with type tensor<3xf32>, but has been previously used or defined with type tensor<2xf32>",
    ),
}


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_real_processes(tool: str, tmp_path: Path) -> None:
    """The console scripts' real entry: exit status 1 and the same message, no traceback."""
    if tool in REAL_PROCESS_CASES:
        name, text, extra, expected = REAL_PROCESS_CASES[tool]
        path = tmp_path / name
        path.write_text(text)
        args = [str(path), *extra]
        expected = expected.replace("{file}", str(path))
    else:
        args = onnx_bytes(b"not onnx")(tmp_path)
        expected = "is not a valid ONNX model"
    if tool == "nnlayout-run":
        args += ["--output-dir", str(tmp_path / "out")]
    if tool == "nnlayout-translate":
        args += ["-o", str(tmp_path / "out.py")]
    result = subprocess.run(
        [sys.executable, "-m", MODULES[tool], *args],
        capture_output=True,
        text=True,
        env={**os.environ, "NNLAYOUT_TRACEBACK": ""},
    )
    assert_one_clean_error(result.returncode, result.stdout, result.stderr, expected)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            RELU.SerializeToString(),
            "error: stdin holds an ONNX model; save it to a file and import "
            "it: nnlayout-import MODEL.onnx -o MODEL.mlir",
        ),
        (b"// \x80", "error: cannot read '<stdin>': not UTF-8 text (byte 0x80 at offset 3)"),
        (b"\x08\x01 not a model", "<stdin>:1:1: error: Unexpected character U+0008"),
    ],
    ids=["onnx-model", "not-utf-8", "control-character"],
)
def test_stdin_that_is_no_mlir_text(data: bytes, expected: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", MODULES["nnlayout-opt"], "-"],
        input=data,
        capture_output=True,
        env={**os.environ, "NNLAYOUT_TRACEBACK": ""},
    )
    assert_one_clean_error(
        result.returncode, result.stdout.decode(), result.stderr.decode(), expected
    )


def test_closed_stdin() -> None:
    """Started with file descriptor 0 closed, Python has no sys.stdin at all."""
    result = subprocess.run(
        [sys.executable, "-m", MODULES["nnlayout-opt"], "-"],
        capture_output=True,
        text=True,
        preexec_fn=lambda: os.close(0),
        env={**os.environ, "NNLAYOUT_TRACEBACK": ""},
    )
    assert_one_clean_error(
        result.returncode,
        result.stdout,
        result.stderr,
        "error: cannot read '<stdin>': stdin is closed",
    )
