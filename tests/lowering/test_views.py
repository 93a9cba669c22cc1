"""Reshapes and slices made views by bufferize (lowering/views.py): the programs of
lit/transforms/bufferize-views.mlir and plan-memory-views.mlir give the same results before
and after the whole pipeline, on every target, padding on and off, interpreter and generated
module; a reinterpret_cast the runtimes cannot run as a reshape is a located error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func

from nnlayout.diagnostics import DiagnosticError
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    ALL_TARGETS,
    DEFAULT_PIPELINE,
    check_semantics,
    compile_module,
    parse,
    random_inputs,
)

LIT = Path(__file__).parents[2] / "lit" / "transforms"


def _functions(name: str) -> list[str]:
    """The functions of a lit file, one module each (its `// -----` parts)."""
    text = (LIT / name).read_text()
    return [part for part in text.split("// -----") if "func.func" in part]


CASES = [
    *(("bufferize-views.mlir", i) for i in range(len(_functions("bufferize-views.mlir")))),
    *(("plan-memory-views.mlir", i) for i in range(len(_functions("plan-memory-views.mlir")))),
]


@pytest.mark.parametrize(("name", "index"), CASES)
def test_views_keep_semantics(name: str, index: int) -> None:
    module = parse(_functions(name)[index])
    inputs = random_inputs(module, seed=index)
    check_semantics(module, inputs, targets=ALL_TARGETS, blocks=False)
    expected = Interpreter(module).run(inputs)
    for target in ("ref", "host"):
        for padding in (True, False):
            planned = compile_module(module, target, padding, DEFAULT_PIPELINE)
            for want, got in zip(expected, run_generated(planned, inputs), strict=True):
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_reinterpret_cast_that_is_no_reshape_is_refused() -> None:
    """Strides other than row-major name other elements than a numpy reshape would."""
    module = parse(_functions("plan-memory-views.mlir")[0])
    planned = compile_module(module, "ref", True, DEFAULT_PIPELINE)
    function = next(op for op in planned.ops if isinstance(op, func.FuncOp))
    cast = next(op for op in function.walk() if op.name == "memref.reinterpret_cast")
    cast.properties["static_strides"] = type(cast.static_strides).from_list(
        cast.static_strides.elt_type, [1, 1]
    )
    with pytest.raises(DiagnosticError, match="reshapes a row-major buffer"):
        Interpreter(planned).run(random_inputs(module))
