"""The reference interpreter: results of small modules against numpy written out by hand,
freeing of intermediates, layouts and CSR at run time, constants, and argument checking."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from nnlayout.diagnostics import DiagnosticError, UserError
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.runtime import interpreter as interpreter_module
from nnlayout.runtime.interpreter import Interpreter, run_function, to_physical

RNG = np.random.default_rng(7)


def module(text: str) -> ModuleOp:
    parsed = parse_module(make_context(), text, "test.mlir")
    parsed.verify()
    return parsed


def array(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def test_small_module_matches_numpy() -> None:
    net = module("""
    func.func @net(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) -> tensor<2x4xf32> {
      %c = nn.constant dense<[0.5, -1.0, 2.0, 0.0]> : tensor<4xf32>
      %m = nn.matmul %x, %y : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
      %r = nn.relu %m : tensor<2x4xf32>
      %a = nn.add %r, %c : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
      %s = nn.softmax %a axis 1 : tensor<2x4xf32>
      func.return %s : tensor<2x4xf32>
    }""")
    x, y = array(2, 3), array(3, 4)
    logits = np.maximum(x.astype(np.float64) @ y, 0) + [0.5, -1.0, 2.0, 0.0]
    expected = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    (result,) = run_function(net, [x, y])
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, expected, rtol=1e-5)


def test_call_and_multiple_results() -> None:
    net = module("""
    func.func private @double(%v: tensor<3xf32>) -> tensor<3xf32> {
      %d = nn.add %v, %v : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      func.return %d : tensor<3xf32>
    }
    func.func @main(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
      %a = func.call @double(%x) : (tensor<3xf32>) -> tensor<3xf32>
      %b = func.call @double(%a) : (tensor<3xf32>) -> tensor<3xf32>
      %n = nn.neg %b : tensor<3xf32>
      func.return %a, %n : tensor<3xf32>, tensor<3xf32>
    }""")
    x = array(3)
    first, second = run_function(net, [x])
    np.testing.assert_array_equal(first, 2 * x)
    np.testing.assert_array_equal(second, -4 * x)


def chain(length: int) -> str:
    """A function applying relu `length` times, with a dead sigmoid hanging off each step."""
    lines = ["func.func @chain(%v0: tensor<4x8xf32>) -> tensor<4x8xf32> {"]
    for i in range(length):
        lines.append(f"  %v{i + 1} = nn.relu %v{i} : tensor<4x8xf32>")
        lines.append(f"  %dead{i} = nn.sigmoid %v{i} : tensor<4x8xf32>")
    lines.append(f"  func.return %v{length} : tensor<4x8xf32>\n}}")
    return "\n".join(lines)


@pytest.mark.parametrize("length", [1, 5, 40])
def test_intermediates_are_freed_after_their_last_use(length: int) -> None:
    interpreter = Interpreter(module(chain(length)))
    x = array(4, 8)
    (result,) = interpreter.run([x])
    np.testing.assert_array_equal(result, np.maximum(x, 0))
    # At each step only the relu's operand and result are held, whatever the length.
    assert interpreter.peak_live_values == 2


def test_values_stay_live_until_their_last_use() -> None:
    net = module("""
    func.func @diamond(%x: tensor<5xf32>) -> tensor<5xf32> {
      %a = nn.exp %x : tensor<5xf32>
      %b = nn.neg %a : tensor<5xf32>
      %c = nn.abs %b : tensor<5xf32>
      %d = nn.add %x, %c : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
      %e = nn.mul %d, %a : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
      func.return %e : tensor<5xf32>
    }""")
    interpreter = Interpreter(net)
    x = array(5)
    (result,) = interpreter.run([x])
    np.testing.assert_allclose(result, (x + np.exp(x)) * np.exp(x), rtol=1e-6)
    # %x and %a live across the middle: {x, a, b, c} when %c is made.
    assert interpreter.peak_live_values == 4


BLOCKED = 'tensor<1x3x5x5xf32, #layout.layout<"NCHW8c">>'


def test_reorder_round_trip_with_padding_is_identity() -> None:
    net = module(f"""
    func.func @round_trip(%x: tensor<1x3x5x5xf32>) -> (tensor<1x3x5x5xf32>, {BLOCKED}) {{
      %b = layout.reorder %x : tensor<1x3x5x5xf32> -> {BLOCKED}
      %p = layout.reorder %b : {BLOCKED} -> tensor<1x3x5x5xf32>
      func.return %p, %b : tensor<1x3x5x5xf32>, {BLOCKED}
    }}""")
    x = array(1, 3, 5, 5)
    plain, blocked = run_function(net, [x])
    np.testing.assert_array_equal(plain, x)
    np.testing.assert_array_equal(blocked, x)  # results come back as logical arrays


def test_blocked_values_are_physical_with_zero_padding() -> None:
    x = array(1, 3, 5, 5)
    net = module(f"""
    func.func @f(%x: tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32> {{
      %b = layout.reorder %x : tensor<1x3x5x5xf32> -> {BLOCKED}
      func.return %x : tensor<1x3x5x5xf32>
    }}""")
    reorder = next(op for op in net.walk() if op.name == "layout.reorder")
    physical = to_physical(x, reorder.results[0].type)
    assert physical.shape == (1, 1, 5, 5, 8)
    np.testing.assert_array_equal(physical[..., :3], x.transpose(0, 2, 3, 1)[:, None])
    assert not physical[..., 3:].any()


def test_nn_ops_on_blocked_and_csr_operands() -> None:
    """An nn op whose operands or result carry a layout computes the same values."""
    csr = 'tensor<4x6xf32, #layout.storage<"csr">>'
    net = module(f"""
    func.func @f(%x: tensor<1x3x5x5xf32>, %a: tensor<2x4xf32>, %s: tensor<4x6xf32>)
        -> (tensor<1x3x5x5xf32>, tensor<2x6xf32>) {{
      %b = layout.reorder %x : tensor<1x3x5x5xf32> -> {BLOCKED}
      %r = nn.sigmoid %b : {BLOCKED}
      %p = layout.reorder %r : {BLOCKED} -> tensor<1x3x5x5xf32>
      %sparse = layout.reorder %s : tensor<4x6xf32> -> {csr}
      %g = nn.gemm %a, %sparse alpha 1.0 beta 1.0 : (tensor<2x4xf32>, {csr}) -> tensor<2x6xf32>
      func.return %p, %g : tensor<1x3x5x5xf32>, tensor<2x6xf32>
    }}""")
    x, a = array(1, 3, 5, 5), array(2, 4)
    s = array(4, 6) * (RNG.random((4, 6)) < 0.3)
    sigmoid, product = run_function(net, [x, a, s])
    np.testing.assert_allclose(sigmoid, 1 / (1 + np.exp(-x)), rtol=1e-6)
    np.testing.assert_allclose(product, a @ s, rtol=1e-5, atol=1e-6)


def test_layout_typed_arguments_take_logical_arrays() -> None:
    net = module(f"""
    func.func @f(%x: {BLOCKED}) -> tensor<1x3x5x5xf32> {{
      %r = nn.relu %x : {BLOCKED}
      %p = layout.reorder %r : {BLOCKED} -> tensor<1x3x5x5xf32>
      func.return %p : tensor<1x3x5x5xf32>
    }}""")
    x = array(1, 3, 5, 5)
    (result,) = run_function(net, [x])
    np.testing.assert_array_equal(result, np.maximum(x, 0))


def test_external_weights_are_loaded_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    w = array(2, 3)
    np.savez(tmp_path / "net.npz", w=w)
    source = tmp_path / "net.mlir"
    net = module("""
    module attributes {nn.weights = "net.npz"} {
      func.func @f(%x: tensor<3x2xf32>) -> tensor<3x3xf32> {
        %w = nn.constant external "w" : tensor<2x3xf32>
        %m = nn.matmul %x, %w : (tensor<3x2xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
        func.return %m : tensor<3x3xf32>
      }
    }""")
    loads: list[str | None] = []

    def counting_load(module: ModuleOp, source_path: str | None) -> object:
        loads.append(source_path)
        return np.load(tmp_path / "net.npz")

    monkeypatch.setattr(interpreter_module, "load_weights", counting_load)
    interpreter = Interpreter(net, source_path=str(source))
    x = array(3, 2)
    for _ in range(3):
        (result,) = interpreter.run([x])
        np.testing.assert_allclose(result, x @ w, rtol=1e-6)
    assert loads == [str(source)]


MODULE_XY = """
func.func @f(%x: tensor<1x3x224x224xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %r = nn.relu %y : tensor<2xf32>
  func.return %r : tensor<2xf32>
}"""


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        (
            [np.zeros((1, 3, 224), np.float32), np.zeros(2, np.float32)],
            "argument 1 (%x): expected shape [1, 3, 224, 224] float32, got [1, 3, 224] float32",
        ),
        (
            [np.zeros((1, 3, 224, 224), np.float32), np.zeros(2, np.float64)],
            "argument 2 (%y): expected shape [2] float32, got [2] float64",
        ),
        (
            [np.zeros((1, 3, 224, 224), np.float32), [0.0, 1.0]],
            "argument 2 (%y): expected a numpy array of shape [2] float32, got list",
        ),
        (
            [np.zeros(2, np.float32)],
            "@f takes 2 input(s) (argument 1 (%x): [1, 3, 224, 224] float32, "
            "argument 2 (%y): [2] float32), got 1",
        ),
    ],
)
def test_argument_errors_name_the_argument(inputs: list[object], message: str) -> None:
    with pytest.raises(UserError) as caught:
        run_function(module(MODULE_XY), inputs)  # type: ignore[arg-type]
    assert caught.value.message == message


@pytest.mark.parametrize(
    ("text", "entry", "message"),
    [
        (
            "func.func @a() -> () {\n func.return\n}\nfunc.func @b() -> () {\n func.return\n}",
            None,
            "the module has 2 public functions (@a, @b); name the one to run (--entry NAME)",
        ),
        (
            "func.func private @a() -> () {\n func.return\n}",
            None,
            "the module has no public function with a body to run",
        ),
        (
            "func.func @a() -> () {\n func.return\n}",
            "b",
            "no function @b in the module (functions: @a)",
        ),
    ],
)
def test_entry_errors(text: str, entry: str | None, message: str) -> None:
    with pytest.raises(UserError) as caught:
        run_function(module(text), [], entry=entry)
    assert caught.value.message == message


def test_private_function_can_be_named_as_entry() -> None:
    net = module(
        "func.func private @a(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %n = nn.neg %x : tensor<2xf32>\n  func.return %n : tensor<2xf32>\n}"
    )
    x = array(2)
    np.testing.assert_array_equal(run_function(net, [x], entry="a")[0], -x)


def test_op_without_kernel_is_a_located_error() -> None:
    net = module(
        "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %c = arith.constant dense<1.0> : tensor<2xf32>\n"
        "  %s = nn.add %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
        "  func.return %s : tensor<2xf32>\n}"
    )
    with pytest.raises(DiagnosticError) as caught:
        run_function(net, [array(2)])
    assert caught.value.message == "the interpreter cannot run 'arith.constant' (no kernel)"
    assert caught.value.op.name == "arith.constant"


def test_recursion_is_an_error() -> None:
    net = module(
        "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %y = func.call @f(%x) : (tensor<2xf32>) -> tensor<2xf32>\n"
        "  func.return %y : tensor<2xf32>\n}"
    )
    with pytest.raises(DiagnosticError) as caught:
        run_function(net, [array(2)])
    assert caught.value.message == "@f calls itself; recursion cannot be interpreted"


def test_live_values_of_callers_count() -> None:
    """A callee's values are live on top of its caller's."""
    net = module("""
    func.func private @g(%v: tensor<2xf32>) -> tensor<2xf32> {
      %n = nn.neg %v : tensor<2xf32>
      %m = nn.mul %v, %n : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      func.return %m : tensor<2xf32>
    }
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %k = nn.exp %x : tensor<2xf32>
      %c = func.call @g(%k) : (tensor<2xf32>) -> tensor<2xf32>
      %s = nn.sum %x, %k, %c : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      func.return %s : tensor<2xf32>
    }""")
    interpreter = Interpreter(net)
    x = array(2)
    expected = x + np.exp(x) - np.exp(2 * x)
    np.testing.assert_allclose(interpreter.run([x])[0], expected, rtol=1e-5, atol=1e-6)
    # {x, k} of @main stay held while @g holds {v, n, m}; afterwards at most {x, k, c, s}.
    assert interpreter.peak_live_values == 5
