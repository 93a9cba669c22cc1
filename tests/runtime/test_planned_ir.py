"""The verifier of planned IR where lit cannot reach it: a generated module loaded beside
another target's planned IR, arguments marked as outputs, views of arguments, and what the
checker accepts (the corpus of refusals is lit/errors/planned)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from nnlayout.diagnostics import DiagnosticError, UserError
from nnlayout.lowering.to_numpy import generated_module, import_generated, translate
from nnlayout.runtime.interpreter import Interpreter, find_entry
from nnlayout.runtime.plan_check import verify_function
from tests.helpers import DEFAULT_PIPELINE, compile_module, parse

NET = """
func.func @net(%x: tensor<1x3x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %w = nn.constant dense<0.5> : tensor<8x3x3x3xf32>
  %b = nn.constant dense<0.1> : tensor<8xf32>
  %c = nn.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  %r = nn.relu %c : tensor<1x8x8x8xf32>
  %w2 = nn.constant dense<0.25> : tensor<8x8x3x3xf32>
  %c2 = nn.conv2d %r, %w2, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  func.return %c2 : tensor<1x8x8x8xf32>
}
"""


@pytest.mark.parametrize("hashed", [True, False])
@pytest.mark.parametrize(("mine", "other"), [("ref", "avx2"), ("avx2", "ref")])
def test_a_generated_module_refuses_the_planned_ir_of_another_target(
    tmp_path: Path, mine: str, other: str, hashed: bool
) -> None:
    """Was an IndexError or a reshape ValueError traceback at import. A generated module
    records its IR's SHA-256 (`hashed`); one without it (written before, or edited) is
    still refused, by the IR's kernels and buffers not being its own."""
    for target in (mine, other):
        (tmp_path / target).mkdir()
        planned = compile_module(parse(NET), target, True, DEFAULT_PIPELINE)
        translate(planned, tmp_path / target / "net.py")
    shutil.copyfile(tmp_path / other / "net.planned.mlir", tmp_path / mine / "net.planned.mlir")
    code = tmp_path / mine / "net.py"
    if not hashed:
        code.write_text(
            re.sub(r"PLANNED_IR_SHA256 = '[0-9a-f]+'", "PLANNED_IR_SHA256 = None", code.read_text())
        )
    with pytest.raises(UserError) as caught:
        import_generated(code)
    message = str(caught.value)
    assert "\n" not in message
    ir = tmp_path / mine / "net.planned.mlir"
    if hashed:
        assert f"'{code}' and its planned IR '{ir}'" in message
    else:
        assert f"'{ir}' is not the planned IR" in message
    assert "translate again" in message


def _writes_argument(marked: bool) -> str:
    """relu of %x written into the argument %out (marked as an output or not), returned
    through a copy."""
    mark = " {nnlayout.output}" if marked else ""
    return f"""
func.func @f(%x: memref<2x4xf32>, %out: memref<2x4xf32>{mark}) -> memref<2x4xf32> attributes {{nnlayout.arena_bytes = 0 : i64}} {{
  nn.compute ins(%x : memref<2x4xf32>) outs(%out : memref<2x4xf32>) {{
  ^bb0(%a: tensor<2x4xf32>):
    %y = nn.relu %a : tensor<2x4xf32>
    nn.yield %y : tensor<2x4xf32>
  }}
  %copy = memref.alloc() {{alignment = 64 : i64}} : memref<2x4xf32>
  "memref.copy"(%out, %copy) : (memref<2x4xf32>, memref<2x4xf32>) -> ()
  func.return %copy : memref<2x4xf32>
}}
"""


def test_an_argument_marked_as_an_output_is_written_in_place_by_both_backends() -> None:
    module = parse(_writes_argument(marked=True))
    x = np.arange(-4, 4, dtype=np.float32).reshape(2, 4)
    out = np.full((2, 4), np.nan, np.float32)
    (result,) = Interpreter(module).run([x, out])
    np.testing.assert_array_equal(out, np.maximum(x, 0))
    np.testing.assert_array_equal(result, np.maximum(x, 0))
    out[...] = np.nan
    with generated_module(module) as generated:
        (result,) = generated.run(x, out)
    np.testing.assert_array_equal(out, np.maximum(x, 0))
    np.testing.assert_array_equal(result, np.maximum(x, 0))


def test_an_argument_not_marked_as_an_output_is_never_written() -> None:
    module = parse(_writes_argument(marked=False))
    x = np.ones((2, 4), np.float32)
    out = np.full((2, 4), 7.0, np.float32)
    expected = re.escape("nn.compute writes function argument 2 (%out), the caller's array")
    with pytest.raises(DiagnosticError, match=expected):
        Interpreter(module).run([x, out])
    with pytest.raises(DiagnosticError, match=expected), generated_module(module):
        pass
    np.testing.assert_array_equal(out, 7.0)


VIEWS = """
func.func @f(%x: memref<2x8xf32>) -> memref<2x8xf32> attributes {{nnlayout.arena_bytes = 128 : i64}} {{
  %arena = memref.alloc() {{alignment = 64 : i64}} : memref<128xi8>
  %o = arith.constant 0 : index
  %v = memref.view %arena[%o][] : memref<128xi8> to memref<4x8xf32>
  %s = memref.subview %v[1, 2] [2, 3] [2, 2] : memref<4x8xf32> to memref<2x3xf32, strided<[16, 2], offset: 10>>
  %c = "memref.cast"(%s) : (memref<2x3xf32, strided<[16, 2], offset: 10>>) -> memref<2x3xf32, strided<[16, 2], offset: 10>>
  %flat = memref.reinterpret_cast %v to offset: [{offset}], sizes: [{rows}, 8], strides: [8, 1] : memref<4x8xf32> to memref<{rows}x8xf32{layout}>
  %xs = memref.subview %x[0, 0] [1, 8] [1, 1] : memref<2x8xf32> to memref<1x8xf32, strided<[8, 1]>>
  func.return %x : memref<2x8xf32>
}}
"""


@pytest.mark.parametrize(
    ("offset", "rows", "problem"),
    [
        (0, 4, None),  # all of the view
        (16, 2, None),  # its last two rows
        (24, 2, "addresses elements 24 to 39 of its root buffer, its source only 0 to 31"),
        (0, 5, "addresses elements 0 to 39 of its root buffer, its source only 0 to 31"),
    ],
)
def test_the_checker_follows_views_by_what_they_address(
    offset: int, rows: int, problem: str | None
) -> None:
    """Strided subviews, casts, reinterpretations and views of arguments that only read are
    accepted; a reinterpretation reaching past its source is not."""
    layout = "" if offset == 0 else f", strided<[8, 1], offset: {offset}>"
    module = parse(VIEWS.format(offset=offset, rows=rows, layout=layout))
    function = find_entry(module)
    if problem is None:
        assert verify_function(function) == 1
    else:
        with pytest.raises(DiagnosticError, match=problem):
            verify_function(function)
