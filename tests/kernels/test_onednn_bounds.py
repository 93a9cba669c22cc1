"""The guards and bounds of oneDNN's kernels (`kernels/onednn/bounds.py`, `calls.py`): a
fused relu/clip post-op runs only where no NaN can arise, a kernel takes the bound its
operand's writer kept instead of measuring it (through convolutions, pooling, binary ops,
concats and batch norm), measures where no bound is known, and the results stay the
unfused program's."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.nn import Conv2dOp
from nnlayout.dialects.nn.base import bf16_dtype
from nnlayout.kernels.onednn import bounds as onednn_bounds
from nnlayout.kernels.onednn import calls as onednn_calls
from nnlayout.kernels.onednn.prepared import compiled_for
from nnlayout.lowering.to_numpy import import_generated, run_generated, translate
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.fused_programs import block, counting, fused_ops, with_specials
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    assert_same,
    compile_module,
    dense,
    parse,
    random_inputs,
)
from nnlayout.tests.random_programs import check_program

pytestmark = pytest.mark.onednn  # its kernels are the only fused ones


GUARDED = [("nn.relu", ""), ("nn.clip", "min 0.0 max 6.0 "), ("nn.leaky_relu", "alpha 0.0 ")]


def largest_alternating(module: ModuleOp) -> list[np.ndarray]:
    """Finite inputs of float32's largest magnitude in alternating signs: the convolutions'
    sums overflow to +inf, -inf and (adding both) NaN."""
    return [
        np.where(np.indices(x.shape).sum(axis=0) % 2 == 0, 3e38, -3e38).astype(np.float32)
        for x in random_inputs(module)
    ]


@pytest.mark.parametrize(("activation", "attributes"), GUARDED)
@pytest.mark.parametrize("inputs_kind", ["finite", "nan_and_inf", "overflowing"])
def test_cheap_post_ops_run_only_where_no_nan_can_arise(
    activation: str, attributes: str, inputs_kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """relu, clip and leaky_relu with alpha 0 get oneDNN's relu/clip post-op, which turns
    NaN into a bound, only on calls whose operands are finite and small enough that the
    convolution cannot overflow; other calls run the exact epilogue. Which one ran is
    recorded, and the results are the unfused program's. Where sums overflow, which become
    NaN depends on the order oneDNN adds in, so there the oracle is the exact epilogue
    alone (the guard always false)."""
    module = parse(block(16, activation, attributes))
    inputs = {
        "finite": random_inputs(module),
        "nan_and_inf": with_specials(random_inputs(module)),
        "overflowing": largest_alternating(module),
    }[inputs_kind]
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    assert [op.activation.data for op in fused_ops(planned)] == [activation[3:]] * 2
    bounds = onednn_bounds.conv_bounds
    checks: list[bool] = []

    def recorded(*args: object) -> tuple[float, float]:
        element, norm = bounds(*args)  # type: ignore[arg-type]
        checks.append(element < onednn_bounds.FINITE_LIMIT)
        return element, norm

    if inputs_kind == "overflowing":
        monkeypatch.setattr(onednn_bounds, "conv_bounds", lambda *args: (math.inf, math.inf))
        expected = run_generated(planned, inputs)
    else:
        expected = Interpreter(module).run(inputs)
    monkeypatch.setattr(onednn_bounds, "conv_bounds", recorded)
    assert_same(expected, run_generated(planned, inputs))
    # Both convolutions are checked: the first reads x and r, the second the first's
    # result (finite after a clip of overflowing sums, not after a relu).
    assert checks == [inputs_kind == "finite", bool(np.isfinite(expected[0]).all())]


@pytest.mark.parametrize(
    ("source", "bounded"),
    [
        (np.ones(64, np.float32), True),
        (np.full(64, 1e17, np.float32), True),  # |x| = 8e17, |w| = 8: far from overflow
        (np.full(64, 1e36, np.float32), False),  # its square sum overflows
        (np.array([1.0, np.nan], np.float32), False),
        (np.array([1.0, -np.inf], np.float32), False),
    ],
)
def test_the_guard_admits_finite_operands_that_cannot_overflow(
    source: np.ndarray, bounded: bool
) -> None:
    """A convolution's guard: finite operands whose norms bound every partial sum below
    float32's overflow (by Cauchy-Schwarz); with them, a bound on the result's norm."""
    conv = next(op for op in parse(block(16, "nn.relu")).walk() if isinstance(op, Conv2dOp))
    factors = onednn_bounds.conv_norm_factors(conv)  # sqrt(3 * 3), sqrt(2 * 9 * 9 positions)
    limit = onednn_bounds.FINITE_LIMIT
    with np.errstate(all="ignore"):  # as the interpreter and generated code run
        measured = onednn_bounds.norm(source)
    assert measured >= float(np.linalg.norm(source.astype(np.float64))) or not bounded
    element, norm = onednn_bounds.conv_bounds(factors, measured, 0.0, 8.0, 0.5)
    assert (element < limit) is bounded
    if bounded:
        assert norm == pytest.approx(3 * 8 * measured + math.sqrt(162) * 0.5)
    as_addend = onednn_bounds.conv_bounds(factors, 1.0, measured, 8.0, 0.0)
    assert (as_addend[0] < limit) is bounded


@pytest.mark.parametrize("name", ["mul", "add", "sub"])
@pytest.mark.parametrize(
    ("a", "b"), [((2, 3, 4, 5), (1, 3, 1, 1)), ((1, 3, 1, 1), (2, 3, 4, 5)), ((2, 3), (2, 3))]
)
def test_a_binary_result_is_bounded_by_its_sources_bounds(
    name: str, a: tuple[int, ...], b: tuple[int, ...]
) -> None:
    """A mul's, add's or sub's result norm is within the bound made from its sources' norms,
    whichever of them broadcasts (oneDNN's first source is the full-size one)."""
    full = tuple(max(x, y) for x, y in zip(a, b, strict=True))
    t = {s: f"tensor<{'x'.join(map(str, s))}xf32>" for s in (a, b, full)}
    text = f"""
func.func @f(%a: {t[a]}, %b: {t[b]}) -> {t[full]} {{
  %y = nn.{name} %a, %b : ({t[a]}, {t[b]}) -> {t[full]}
  func.return %y : {t[full]}
}}"""
    op = next(op for op in parse(text).walk() if op.name == f"nn.{name}")
    found = onednn_bounds.sources_bound(op)
    assert found is not None
    bound = found[1]
    rng = np.random.default_rng(0)
    for _ in range(20):
        x, y = (
            rng.standard_normal(s).astype(np.float32) * 10.0 ** rng.integers(-3, 4) for s in (a, b)
        )
        result = {"mul": x * y, "add": x + y, "sub": x - y}[name]
        first, second = (x, y) if a == full else (y, x)
        got = float(np.linalg.norm(result.astype(np.float64)))
        assert got <= bound(onednn_bounds.norm(first), onednn_bounds.norm(second))


CHAIN = """
func.func @f(%x: tensor<1x16x9x9xf32>) -> tensor<1x16x9x9xf32> {
  %w = nn.constant dense<DENSE> : tensor<16x16x3x3xf32>
  %c1 = nn.conv2d %x, %w CONV : (tensor<1x16x9x9xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x9x9xf32>
  %a1 = nn.clip %c1 min 0.0 max 6.0 : tensor<1x16x9x9xf32>
  %c2 = nn.conv2d %a1, %w CONV : (tensor<1x16x9x9xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x9x9xf32>
  %a2 = nn.relu %c2 : tensor<1x16x9x9xf32>
  %c3 = nn.conv2d %a2, %w CONV : (tensor<1x16x9x9xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x9x9xf32>
  %a3 = nn.clip %c3 min 0.0 max 6.0 : tensor<1x16x9x9xf32>
  func.return %a3 : tensor<1x16x9x9xf32>
}""".replace("DENSE", dense((16, 16, 3, 3), 3)).replace(
    "CONV", "strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1"
)


def sizes_measured(
    planned: ModuleOp,
    inputs: list[np.ndarray],
    expected: tuple[np.ndarray, ...],
    monkeypatch: pytest.MonkeyPatch,
    path: Path,
) -> list[int]:
    """The sizes of the arrays the generated module's kernels measure (`norm`) on its second
    run (the first also measures load-time constants, once), whose results are `expected`."""
    generated = import_generated(translate(planned, path).code)
    generated.run(*inputs)
    sizes = counting(monkeypatch)
    assert_same(expected, generated.run(*inputs))
    return sizes


@pytest.mark.parametrize("special", [None, np.nan])
def test_a_chain_of_guarded_convolutions_measures_its_input_once(
    special: float | None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each guarded convolution takes the bound its producer kept on its result instead of
    a pass over it: three fused convolutions measure the chain's input only (and their
    constant weights and biases at the first run). A NaN makes the first result's bound
    unknown, so the second measures (and finds NaN), and so on."""
    module = parse(CHAIN)
    inputs = random_inputs(module)
    if special is not None:
        inputs[0][0, 3, 4, 4] = special
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    assert len(fused_ops(planned)) == 3
    measured = sizes_measured(
        planned, inputs, Interpreter(module).run(inputs), monkeypatch, tmp_path / "chain.py"
    )
    assert measured == ([16 * 81] if special is None else [16 * 81] * 3)


POOLED = (
    CHAIN.replace("nn.clip %c1 min 0.0 max 6.0", "nn.relu %c1")
    .replace("nn.clip %c3 min 0.0 max 6.0", "nn.relu %c3")
    .replace(  # a clip would cap the bounds
        "-> tensor<1x16x9x9xf32> {", "-> tensor<1x16x1x1xf32> {"
    )
    .replace(
        "  func.return %a3 : tensor<1x16x9x9xf32>",
        "  %p = nn.global_avg_pool %a3 : tensor<1x16x9x9xf32> -> tensor<1x16x1x1xf32>\n"
        "  func.return %p : tensor<1x16x1x1xf32>",
    )
)


def test_a_guard_measures_where_its_writers_bound_only_just_fits(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Bounds compound: each convolution multiplies its source's by its weights' norm, so
    deep in a network (ResNet-50's last 8 convolutions) a writer's bound still fits below
    the limit while the reader's sums, bounded from it, do not, though the values are
    small. The reader then measures its operand rather than running its exact epilogue
    (a guarded convolution), or its result rather than running numpy (the global average
    pooling, whose 81-element sums the bound puts past the limit: a finite result is one
    no sum overflowed in). Here every convolution reports a result bound of a quarter of
    the limit: each convolution measures its source (on the first run; then its writer,
    asked to, measures its result) and runs its fused relu/clip, the pooling runs in oneDNN
    and measures its 16 results, and the results are the unfused program's."""
    module = parse(POOLED)
    inputs = random_inputs(module)
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    assert len(fused_ops(planned)) == 3
    bounds, limit = onednn_bounds.conv_bounds, onednn_bounds.FINITE_LIMIT
    guards: list[bool] = []

    def loose(*args: object) -> tuple[float, float]:
        element, _ = bounds(*args)  # type: ignore[arg-type]
        guards.append(element < limit)
        return element, limit / 4

    def no_numpy(op: object, operands: object) -> None:
        raise AssertionError(f"{op} ran in numpy")

    monkeypatch.setattr(onednn_bounds, "conv_bounds", loose)
    monkeypatch.setattr(onednn_calls, "reference_result", no_numpy)
    measured = sizes_measured(
        planned, inputs, Interpreter(module).run(inputs), monkeypatch, tmp_path / "pooled.py"
    )
    assert measured == [16 * 81] * 3 + [16]  # the input, each asked writer's result (the
    # first two convolutions'), and the pooling's result
    # The first convolution's bound is measured; on the first run the others' from their
    # writers fail, then their measured ones pass, and they ask the writers to measure
    # (`NormBound.ask`): on the second, the writers' measured norms pass.
    assert guards == [True, False, True, False, True] + [True] * 3


SWISH_POOLED = (
    CHAIN.split("  %a1 = ")[0].replace("-> tensor<1x16x9x9xf32> {", "-> tensor<1x16x1x1xf32> {")
    + """  %a1 = nn.swish %c1 : tensor<1x16x9x9xf32>
  %p = nn.global_avg_pool %a1 : tensor<1x16x9x9xf32> -> tensor<1x16x1x1xf32>
  func.return %p : tensor<1x16x1x1xf32>
}"""
)
T16 = "tensor<1x16x9x9xf32>"
POOLED_SWISH = f"""
func.func @f(%x: {T16}) -> tensor<1x16x1x1xf32> {{
  %a = nn.swish %x : {T16}
  %p = nn.global_avg_pool %a : {T16} -> tensor<1x16x1x1xf32>
  func.return %p : tensor<1x16x1x1xf32>
}}"""


def test_a_pooling_with_no_bound_measures_its_result_not_its_source(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A convolution fused with swish keeps no bound on its result (nor measures its
    source: it has no cheaper variant to guard), so the global average pooling after it
    (a squeeze-and-excitation block's) has none: it runs in oneDNN and measures its 16
    results, not its 16 x 81 source."""
    module = parse(SWISH_POOLED)
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    assert [op.activation.data for op in fused_ops(planned)] == ["swish"]
    inputs = random_inputs(module)
    measured = sizes_measured(
        planned, inputs, Interpreter(module).run(inputs), monkeypatch, tmp_path / "se.py"
    )
    assert measured == [16]


@pytest.mark.parametrize("special", ["huge", "nan", "inf"])
@pytest.mark.parametrize("padding", [True, False])
def test_a_pooling_whose_result_is_not_finite_runs_in_numpy(special: str, padding: bool) -> None:
    """Where oneDNN's float32 sums overflow (a plane of 3e38s, whose mean the reference's
    float64 sum keeps finite) or meet NaN or an infinity, the pooling's result is not
    finite and is computed again by the reference kernel: the channels hit match the
    interpreter's (3e38, NaN, inf), the others oneDNN's."""
    module = parse(POOLED_SWISH)
    [x] = random_inputs(module)
    x[0, 3] = 3e38
    x[0, 5, 2, 2] = {"huge": 3e38, "nan": np.nan, "inf": np.inf}[special]
    expected = Interpreter(module).run([x])
    assert expected[0][0, 3, 0, 0] == pytest.approx(3e38, rel=1e-6)
    planned = compile_module(module, "onednn", padding, DEFAULT_PIPELINE)
    assert_same(expected, run_generated(planned, [x]))


def squeeze_excite(c: int) -> str:
    """conv -> relu -> SE (pool, 1x1 conv, sigmoid, mul) -> conv + residual -> relu."""
    t, p, w, v = (
        f"tensor<{shape}xf32>"
        for shape in (f"1x{c}x9x9", f"1x{c}x1x1", f"{c}x{c}x3x3", f"{c}x{c}x1x1")
    )
    conv = "strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1"
    return f"""
func.func @f(%x: {t}) -> {t} {{
  %w = nn.constant dense<{dense((c, c, 3, 3), 3)}> : {w}
  %v = nn.constant dense<{dense((c, c, 1, 1), 8)}> : {v}
  %c1 = nn.conv2d %x, %w {conv} : ({t}, {w}) -> {t}
  %a1 = nn.relu %c1 : {t}
  %g = nn.global_avg_pool %a1 : {t} -> {p}
  %s0 = nn.conv2d %g, %v strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : ({p}, {v}) -> {p}
  %s = nn.sigmoid %s0 : {p}
  %m = nn.mul %a1, %s : ({t}, {p}) -> {t}
  %c2 = nn.conv2d %m, %w {conv} : ({t}, {w}) -> {t}
  %r = nn.add %c2, %a1 : ({t}, {t}) -> {t}
  %a2 = nn.relu %r : {t}
  func.return %a2 : {t}
}}"""


SQUEEZE_EXCITE = squeeze_excite(16)


@pytest.mark.parametrize("special", [None, np.nan])
def test_a_squeeze_and_excitation_mul_passes_a_bound_on(
    special: float | None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An SE block's mul (features times sigmoid gates, broadcast over the plane) bounds
    its result by its sources' bounds (|a b| <= |a| |b|), so the residual convolution after
    it, guarded for its fused relu, measures neither its source nor its addend: only the
    input is measured. With a NaN in the input no bound is known past the first
    convolution, and the residual convolution measures both operands (finding NaN)."""
    module = parse(SQUEEZE_EXCITE)
    inputs = random_inputs(module)
    if special is not None:
        inputs[0][0, 3, 4, 4] = special
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    kernels = [kernel_of(op).kernel_name.data for op in planned.walk() if kernel_of(op)]
    assert "mul_onednn" in kernels
    measured = sizes_measured(
        planned, inputs, Interpreter(module).run(inputs), monkeypatch, tmp_path / "se.py"
    )
    whole = 16 * 81
    assert measured == ([whole] if special is None else [whole, 16, whole, whole])


def inception(c: int) -> str:
    """Two conv -> relu branches, concatenated, read by a 1x1 conv -> relu."""
    t, j, w, v = (
        f"tensor<{shape}xf32>"
        for shape in (f"1x{c}x9x9", f"1x{2 * c}x9x9", f"{c}x{c}x3x3", f"{c}x{2 * c}x1x1")
    )
    conv = "strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1"
    return f"""
func.func @f(%x: {t}) -> {t} {{
  %w = nn.constant dense<{dense((c, c, 3, 3), 3)}> : {w}
  %v = nn.constant dense<{dense((c, 2 * c, 1, 1), 9)}> : {v}
  %c1 = nn.conv2d %x, %w {conv} : ({t}, {w}) -> {t}
  %a1 = nn.relu %c1 : {t}
  %c2 = nn.conv2d %a1, %w {conv} : ({t}, {w}) -> {t}
  %a2 = nn.relu %c2 : {t}
  %j = nn.concat %a1, %a2 axis 1 : ({t}, {t}) -> {j}
  %c3 = nn.conv2d %j, %v strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : ({j}, {v}) -> {t}
  %a3 = nn.relu %c3 : {t}
  func.return %a3 : {t}
}}"""


INCEPTION = inception(16)


def test_a_concat_kernel_passes_its_parts_bounds_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A concat copied by oneDNN (an inception or dense block's, channels-last) bounds its
    result by its parts' bounds (the root of their squares' sum), so the guarded
    convolution reading it measures nothing: only the input is measured."""
    module = parse(INCEPTION)
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    kernels = [kernel_of(op).kernel_name.data for op in planned.walk() if kernel_of(op)]
    assert "concat_onednn" in kernels
    inputs = random_inputs(module)
    measured = sizes_measured(
        planned, inputs, Interpreter(module).run(inputs), monkeypatch, tmp_path / "inception.py"
    )
    assert measured == [16 * 81]


@pytest.mark.slow  # 14 compiled variants each: about 10 s apiece on a busy machine
@pytest.mark.parametrize("program", [squeeze_excite, inception])
@pytest.mark.parametrize("channels", [16, 12])
def test_blocks_whose_bounds_pass_on_keep_their_results_everywhere(
    program: Callable[[int], str], channels: int
) -> None:
    """The SE and inception blocks above give the unoptimised results on every target,
    padding on and off (12 channels: padding lanes in blocks of 8 and 16), interpreter and
    generated module, on finite inputs and then on inputs with NaN and infinities."""
    check_program(program(channels), generated=True)


DENSE_BLOCK = (
    """
func.func @f(%x: tensor<1x8x6x6xf32>) -> tensor<1x16x5x5xf32> {
  %w1 = nn.constant dense<W1> : tensor<8x8x3x3xf32>
  %w2 = nn.constant dense<W2> : tensor<8x8x3x3xf32>
  %scale = nn.constant dense<SCALE> : tensor<16xf32>
  %shift = nn.constant dense<SHIFT> : tensor<16xf32>
  %mean = nn.constant dense<MEAN> : tensor<16xf32>
  %var = nn.constant dense<VAR> : tensor<16xf32>
  %a = nn.conv2d %x, %w1 CONV : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %b = nn.conv2d %x, %w2 CONV : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %c = nn.concat %a, %b axis 1 : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x16x6x6xf32>
  %n = nn.batch_norm %c, %scale, %shift, %mean, %var epsilon EPSILON : (tensor<1x16x6x6xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x6x6xf32>
  %r = nn.max_pool2d %n kernel [2, 2] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x16x6x6xf32> -> tensor<1x16x5x5xf32>
  func.return %r : tensor<1x16x5x5xf32>
}""".replace("W1", dense((8, 8, 3, 3), 4))
    .replace("W2", dense((8, 8, 3, 3), 5))
    .replace("SHIFT", dense((16,), 6))
    .replace("MEAN", dense((16,), 7))
    .replace("CONV", "strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1")
)
PART, WHOLE = 8 * 36, 16 * 36


@pytest.mark.parametrize(
    ("target", "special", "measured"),
    [
        # Blocked channels: each part is one range of the concat's bytes, measured by its
        # writer once asked (as in nhwc, below: the pooling measured the whole on the first
        # run and asked, batch norm passed the request on to the parts, and its vectors are
        # measured once now that its source has a bound); batch norm's bound then spares the
        # max pooling a pass over the whole.
        ("onednn-nchw8c", None, [PART, PART, 16, 16]),
        # No bound: the pooling measures (NaN) and asks no one (a NaN is no bound).
        ("onednn-nchw8c", "nan", [WHOLE]),
        ("onednn-nchw8c", "zero variance", [WHOLE]),  # 0 / sqrt(0 + 0): NaN
        # nhwc: a part's bytes are strided; the concat's kernel passes the request on.
        ("onednn", None, [PART, PART, 16, 16]),
    ],
)
def test_a_concat_built_in_place_is_bounded_by_its_parts(
    target: str,
    special: str | None,
    measured: list[int],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """A concat, then batch norm (a relu after it would fuse, see
    `test_batch_norm_and_activation_run_as_one_convolution`) and a guarded kernel: the
    concat's bound is the root of its parts' squared norms, which batch norm carries on;
    where a part or batch norm itself may produce NaN there is no bound, and the guard
    measures."""
    scale, variance = np.linspace(0.5, 2, 16), np.linspace(0.5, 1.5, 16)
    if special == "zero variance":
        scale[3] = variance[3] = 0.0
    module = parse(
        DENSE_BLOCK.replace("SCALE", json.dumps(scale.tolist()))
        .replace("VAR", json.dumps(variance.tolist()))
        .replace("EPSILON", "0.0" if special == "zero variance" else "1.0e-05")
    )
    inputs = random_inputs(module)
    if special == "nan":
        inputs[0][0, 3, 2, 2] = np.nan
    planned = compile_module(module, target, True, DEFAULT_PIPELINE)
    assert (
        sizes_measured(
            planned, inputs, Interpreter(module).run(inputs), monkeypatch, tmp_path / "block.py"
        )
        == measured
    )


def test_a_guarded_convolution_creates_its_exact_primitive_when_first_needed(
    tmp_path: Path,
) -> None:
    """Loading creates the primitive that runs on finite operands only; the exact one (elu
    for relu, no post-op for clip) is created at the first call that needs it."""
    module = parse(CHAIN.replace("9x9", "13x13"))  # shapes no other test compiles
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    generated = import_generated(translate(planned, tmp_path / "lazy.py").code)
    convolutions = [op for op in fused_ops(planned) if op.parent_op() is not None]
    variants = [compiled_for(op) for op in convolutions]
    assert all(finite is not None for _, finite, _ in variants)

    def created() -> list[bool]:
        return [exact._primitive.created is not None for exact, _, _ in variants]

    inputs = random_inputs(module)
    generated.run(*inputs)
    assert created() == [False] * 3
    inputs[0][0, 0, 0, 0] = np.nan
    assert_same(Interpreter(module).run(inputs), generated.run(*inputs))
    assert created() == [True] * 3


def test_bounds_are_shared_within_one_binding_only() -> None:
    """A kernel links to the bound its operand's writer keeps only when both were bound for
    the same run order (one Interpreter, one generated Program): binding the same IR again
    with another kernel for the writer leaves no stale bound behind."""
    module = parse("""
func.func @f(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %a = nn.relu %x : tensor<1x8x4x4xf32>
  %p = nn.clip %a min -1.0 max 5.0 : tensor<1x8x4x4xf32>
  func.return %p : tensor<1x8x4x4xf32>
}""")
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    x = np.ones((1, 8, 4, 4), np.float32)
    Interpreter(planned).run([x])  # relu_onednn keeps the bound 4 on its result
    relu = next(op for op in planned.walk() if op.name == "nn.relu")
    del relu.attributes["kernel"]  # bound again below: the reference kernel, no bound
    x[0, 0, 0, 0] = np.nan
    assert_same(Interpreter(module).run([x]), Interpreter(planned).run([x]))


def test_operands_passed_as_arguments_are_measured_on_every_call() -> None:
    """Only load-time constants have their norm measured once: a bias (or weights) that is
    a function argument may hold other values on the next call, even through a read-only
    view of the same array."""
    module = parse("""
func.func @f(%x: tensor<1x8x6x6xf32>, %w: tensor<8x8x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x6x6xf32> {
  %c = nn.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  %r = nn.relu %c : tensor<1x8x6x6xf32>
  func.return %r : tensor<1x8x6x6xf32>
}""")
    for target in ("onednn", "onednn-nchw8c"):
        planned = compile_module(module, target, True, DEFAULT_PIPELINE)
        assert fused_ops(planned)
        x, weights = np.ones((1, 8, 6, 6), np.float32), np.full((8, 8, 3, 3), 0.1, np.float32)
        bias = np.zeros(8, np.float32)
        view = bias.view()
        view.flags.writeable = False
        interpreter = Interpreter(planned)
        interpreter.run([x, weights, view])
        bias[3] = np.nan
        assert_same(
            Interpreter(module).run([x, weights, view]), interpreter.run([x, weights, view])
        )


def test_the_norm_of_a_bf16_array_is_its_widened_f32_norm() -> None:
    """A bf16 array's norm bound is measured on its exact f32 values by BLAS (numpy's dot of
    ml_dtypes' bfloat16 is a generic loop, and rounds its sum to bf16): an upper bound on the
    true norm, within its f32 sum's rounding bound; inf or NaN where the array holds them."""
    rng = np.random.default_rng(4)
    values = rng.standard_normal(100_003).astype(bf16_dtype())
    exact = float(np.linalg.norm(values.astype(np.float64)))
    measured = onednn_bounds.norm(values)
    assert measured == onednn_bounds.norm(values.astype(np.float32))
    assert exact <= measured <= exact * (1 + values.size * 2.0**-23)
    values[7] = np.inf
    assert not math.isfinite(onednn_bounds.norm(values))
    values[7] = np.nan
    assert not math.isfinite(onednn_bounds.norm(values))
