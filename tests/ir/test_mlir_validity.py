"""What nnlayout prints after bufferization and planning is valid MLIR: the memref types
(strided views, offsets, 5-D blocked buffers) and the builtin/func/arith/memref ops are
accepted by a real MLIR tool, `iree-opt` from the iree-base-compiler wheel (our own dialects
pass as unregistered ops and attributes)."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nnlayout.examples.make_models import build
from nnlayout.frontends.onnx import import_model
from nnlayout.ir.printer import print_module
from nnlayout.tests.helpers import DEFAULT_PIPELINE, compile_module

# The slow tier; skipped without iree-opt (the mlir extra), tests/conftest.py.
pytestmark = [pytest.mark.slow, pytest.mark.iree]
ROOT = Path(__file__).resolve().parents[2]
IREE_OPT = shutil.which("iree-opt", path=str(Path(sys.executable).parent)) or shutil.which(
    "iree-opt"
)


def iree_opt(text: str) -> subprocess.CompletedProcess[str]:
    assert IREE_OPT is not None, "iree-opt not found: install the mlir extra (iree-base-compiler)"
    return subprocess.run(
        [IREE_OPT, "--allow-unregistered-dialect", "--split-input-file", "-"],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
    )


def generic(pipeline_input: Path, pipeline: str) -> str:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "nnlayout.tools.opt",
            str(pipeline_input),
            "--split-input-file",
            "-p",
            pipeline,
            "--print-op-generic",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


@pytest.mark.parametrize("target", ["ref", "avx2", "avx512"])
def test_bufferized_lit_examples_are_valid_mlir(target: str) -> None:
    text = generic(
        ROOT / "lit" / "transforms" / "bufferize.mlir", f"default-pipeline{{target={target}}}"
    )
    result = iree_opt(text)
    assert result.returncode == 0, result.stderr
    assert "memref.subview" in result.stdout or "memref.view" in result.stdout


@pytest.mark.parametrize("name", ["densenet121", "unet"])
def test_bufferized_zoo_model_is_valid_mlir(name: str) -> None:
    module = import_model(build(name, small=True), inline_limit=16).module
    compiled = compile_module(module, "avx2", True, DEFAULT_PIPELINE)
    text = io.StringIO()
    print_module(compiled, text, generic=True)
    result = iree_opt(text.getvalue())
    assert result.returncode == 0, result.stderr
    assert "strided<" in result.stdout


def test_iree_opt_rejects_an_invalid_view() -> None:
    """The check has teeth: a view larger than its source is refused by MLIR's verifier."""
    text = (
        "func.func @f() {\n  %a = memref.alloc() : memref<16xi8>\n"
        "  %c0 = arith.constant 0 : index\n"
        "  %v = memref.view %a[%c0][] : memref<16xi8> to memref<2x2xf32, strided<[3, 1]>>\n"
        "  return\n}\n"
    )
    assert iree_opt(text).returncode != 0
