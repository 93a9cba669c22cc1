"""fuse-activations' leaky ReLU written as a selection (`torch.where(x > 0, x, a * x)` and
its variants): which forms fuse, and that the fused op gives the selection's very bits,
NaN, infinities and signed zeros included, on every target with padding on and off,
interpreter and generated module, after a convolution whose post-op it becomes (there
within the convolution's rounding, which differs between targets)."""

from __future__ import annotations

import numpy as np
import pytest

from nnlayout.dialects import nn
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import dense, everywhere, parse, same_bits, special

SHAPE = "1x20x6x6"
T = f"tensor<{SHAPE}xf32>"
M = f"tensor<{SHAPE}xi1>"


def selection(
    predicate: str, zero_first: bool, keeps_x_first: bool, slope: float, scaled: bool = False
) -> str:
    """conv(20 -> 20) -> a selection of the conv's result c by `c <predicate> 0` (or `0
    <predicate> c`), c in where's first value position or second. `scaled`: c is the conv's
    result times the second argument, which holds NaN, infinities and signed zeros."""
    compared = "%zero, %c" if zero_first else "%c, %zero"
    zero_type, c_type = ("tensor<f32>", T) if not zero_first else (T, "tensor<f32>")
    types = f"({T}, tensor<f32>)" if not zero_first else f"(tensor<f32>, {T})"
    values = "%c, %s" if keeps_x_first else "%s, %c"
    return f"""
func.func @main(%x: {T}, %e: {T}) -> {T} {{
  %w = nn.constant dense<{dense((20, 20, 3, 3), 3)}> : tensor<20x20x3x3xf32>
  %v = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : ({T}, tensor<20x20x3x3xf32>) -> {T}
  {"%c = nn.mul %v, %e" if scaled else "%c = nn.add %v, %v"} : ({T}, {T}) -> {T}
  %zero = nn.constant dense<0.0> : tensor<f32>
  %a = nn.constant dense<{slope!r}> : tensor<f32>
  %m = nn.compare "{predicate}" {compared} : {types} -> {M}
  %s = nn.mul %c, %a : ({T}, tensor<f32>) -> {T}
  %y = nn.where %m, {values} : ({M}, {T}, {T}) -> {T}
  func.return %y : {T}
}}"""


# (predicate of `c ? 0`, whether x is where's first value) for a leaky ReLU.
LEAKY = [("gt", True), ("ge", True), ("lt", False), ("le", False)]
MIRRORED = {"gt": "lt", "ge": "le", "lt": "gt", "le": "ge"}


def _fused(text: str) -> bool:
    from nnlayout.tests.helpers import compile_module

    compiled = compile_module(parse(text), "ref", True, "fuse-activations")
    return any(isinstance(op, nn.LeakyReluOp) for op in compiled.walk())


@pytest.mark.parametrize("scaled", [False, True], ids=["conv", "specials"])
@pytest.mark.parametrize("zero_first", [False, True])
@pytest.mark.parametrize(("predicate", "keeps_x_first"), LEAKY)
def test_each_leaky_selection_fuses_and_keeps_its_bits(
    predicate: str, keeps_x_first: bool, zero_first: bool, scaled: bool
) -> None:
    """Fused, and bit for bit the unfused selection's result (the tensor-level interpreter
    on the module as written) on every target: on a convolution's result (2c: the add
    fuses into the convolution, then the leaky ReLU as its post-op), and on one times
    specials (NaN, +-inf, +-0)."""
    written = MIRRORED[predicate] if zero_first else predicate
    text = selection(written, zero_first, keeps_x_first, 0.1, scaled)
    assert _fused(text)
    module = parse(text)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 20, 6, 6)).astype(np.float32)
    e = special(rng, 1, 20, 6, 6)
    (want,) = Interpreter(module).run([x, e])
    if scaled:
        assert np.isnan(want).any() and np.isinf(want).any()
        assert (np.signbit(want) & (want == 0)).any() and (want < 0).any()
    for target, padding, _, (got,) in everywhere(module, [x, e]):
        try:
            _same_up_to_rounding(got, want)
        except AssertionError as error:
            raise AssertionError(f"{target} padding={padding}: {error}") from None


def _same_up_to_rounding(got: np.ndarray, want: np.ndarray) -> None:
    """NaN, infinities and zeros (with their signs) where `want` has them, bit for bit; the
    other values within the convolution's rounding, which differs between targets."""
    special = ~np.isfinite(want) | (want == 0)
    same_bits(got[special], want[special])
    scale = float(np.abs(want[~special]).max(initial=1.0))
    np.testing.assert_allclose(got[~special], want[~special], rtol=0, atol=1e-5 * scale)


@pytest.mark.parametrize(
    ("predicate", "keeps_x_first", "slope"),
    [
        ("gt", True, -0.1),  # at -0.0 the selection gives +0.0, leaky_relu -0.0
        ("gt", True, 0.0),
        ("gt", False, 0.1),  # keeps the product where c > 0: not a leaky ReLU
        ("lt", True, 0.1),
        ("eq", True, 0.1),
    ],
)
def test_other_selections_stay(predicate: str, keeps_x_first: bool, slope: float) -> None:
    assert not _fused(selection(predicate, False, keeps_x_first, slope))


def test_a_negative_slope_would_change_a_signed_zero() -> None:
    """Why a slope must be positive: where(x > 0, x, -0.1 * x) at x = -0.0 is +0.0, where
    leaky_relu keeps -0.0 (the reference kernels of both, on the same input)."""
    module = parse(selection("gt", False, True, -0.1, scaled=True))
    x = np.zeros((1, 20, 6, 6), np.float32)
    e = np.full((1, 20, 6, 6), -0.0, np.float32)
    (selected,) = Interpreter(module).run([x, e])  # c = 0 * -0.0 = -0.0 everywhere
    assert not np.signbit(selected).any()
    leaky = parse(
        f"func.func @main(%c: {T}) -> {T} {{\n"
        f"  %y = nn.leaky_relu %c alpha -0.1 : {T}\n  func.return %y : {T}\n}}"
    )
    (kept,) = Interpreter(leaky).run([e])
    assert np.signbit(kept).all()
