"""Every stage's IR goes through upstream MLIR (`iree-opt`, of the iree-base-compiler wheel)
and back unchanged: printed by nnlayout in the custom form MLIR reads
(`--print-mlir-compatible`: nn and layout ops generic, the others custom) or in the generic
form, parsed and printed again by iree-opt (in its custom form, or `--mlir-print-op-generic`),
then parsed by nnlayout: the module is the same op for op, and runs to the same bits.

Slow (iree-opt starts in about a second per call): `pytest -m slow`; skipped where iree-opt is
not installed."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from nnlayout.examples.make_models import build
from nnlayout.frontends.onnx import import_model
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.ir.printer import print_module
from nnlayout.ir.verify import verify_module
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import compile_module, random_inputs

IREE_OPT = shutil.which("iree-opt", path=str(Path(sys.executable).parent)) or shutil.which(
    "iree-opt"
)
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(IREE_OPT is None, reason="iree-opt (iree-base-compiler) is not installed"),
]

LAYOUTS = "select-dispatch{{target={target} padding={padding}}},insert-layouts"
STAGES = {
    "imported": None,
    "layouts": LAYOUTS,
    "bufferized": LAYOUTS + ",propagate-layouts,fold-constants,bufferize",
    "planned": "default-pipeline{{target={target} padding={padding}}}",
}


def through_iree(text: str, generic: bool) -> str:
    """`text` as iree-opt prints it back (in its generic form when `generic`)."""
    assert IREE_OPT is not None
    done = subprocess.run(
        [
            IREE_OPT,
            "--allow-unregistered-dialect",
            *(["--mlir-print-op-generic"] if generic else []),
            "-",
        ],
        input=text,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[:2000]
    return done.stdout


def printed(module: ModuleOp, generic: bool) -> str:
    out = io.StringIO()
    print_module(module, out, generic=generic, mlir_compatible=not generic)
    return out.getvalue()


@pytest.fixture(scope="module")
def imported() -> ModuleOp:
    return import_model(build("resnet50", small=True), inline_limit=sys.maxsize).module


@pytest.mark.parametrize("form", ["custom", "generic"])
@pytest.mark.parametrize(
    ("stage", "target", "padding"),
    [
        ("imported", "", False),
        *(
            (stage, target, padding)
            for stage in list(STAGES)[1:]
            for target, padding in (("avx2", True), ("ref", False))
        ),
    ],
)
def test_every_stage_round_trips_through_iree_opt(
    imported: ModuleOp, stage: str, form: str, target: str, padding: bool
) -> None:
    pipeline = STAGES[stage]
    module = imported if pipeline is None else compile_module(imported, target, padding, pipeline)
    text = printed(module, form == "generic")
    back = through_iree(text, form == "generic")
    if form == "custom":  # iree-opt wrote builtin/func/arith/memref ops in their custom form
        assert "func.func @main(" in back and '"func.func"' not in back
    reparsed = parse_module(make_context(), back, "<iree-opt>")
    verify_module(reparsed, back)
    assert reparsed.is_structurally_equivalent(module)
    inputs = random_inputs(module)
    expected = Interpreter(module).run(inputs)
    actual = Interpreter(reparsed).run(inputs)
    for want, got in zip(expected, actual, strict=True):
        np.testing.assert_array_equal(got, want)
