"""Random valid `nn` programs, and the check that compiling one keeps its results.

`random_program(choose)` builds a small CNN-like function with the op builders: an NCHW input
with an awkward channel count (1, 3, 5, 17, 33, ...), then a chain of layers drawn at random:
convolutions (strides, pads, dilations, groups, depthwise), element-wise ops (sigmoid, exp,
clip, div by a constant, ...), residual adds, concats, max/average pooling (ceil_mode,
count_include_pad), global pooling, softmax over channels, batch norm, transposed
convolutions, transposes and reshapes, squeeze-and-excitation products (a broadcast operand
computed from the activations), and sometimes a dense head (some with CSR weights). Every decision goes
through a `Choices`, so the same generator runs under hypothesis (which then shrinks a failure
to a small program) and from a seeded numpy generator (`scripts/fuzz_programs.py`). Weights come from a numpy generator seeded by one choice, so that
shrinking works on structure rather than on values. The program is returned as MLIR text: a
failure is reproducible by pasting it into a regression test.

`check_program(text)` runs the text unoptimised and after
`default-pipeline{target=T padding=P verify=true}` (which ends with verify-memory-plan checking
the memory plan) for every target and padding setting, on the same random inputs, and compares
with `assert_same` (1e-4 of the output's largest magnitude; NaN and Inf positions exact); with
`generated=True` the generated module of each too, run twice on different inputs.
"""

from __future__ import annotations

import io
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

import numpy as np
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects import nn
from nnlayout.dialects.layout import StorageAttr
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.ir.printer import print_module
from nnlayout.kernels.onednn.binding import available as onednn_available
from nnlayout.lowering.to_numpy import import_generated, translate
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import assert_same, random_inputs
from nnlayout.tools.driver import parse_pipeline, run_pipeline
from nnlayout.transforms import get_all_passes

T = TypeVar("T")

CHANNELS = (1, 2, 3, 4, 5, 8, 16, 17, 24, 32, 33)
# Blocked kernels only take convolutions of at least 16k multiply-accumulates: wide layers
# are drawn more often, so that small images still reach them.
WIDE = (8, 16, 17, 24, 32, 33)
# oneDNN where it loads: its kernels, formats and fused post-ops get the same check.
TARGETS = ("ref", "avx2", "avx512", *(("onednn",) if onednn_available() else ()))
PIPELINE = "default-pipeline{{target={target} padding={padding} nnan={nnan} verify=true}}"


class Choices(Protocol):
    """Where the generator's decisions come from."""

    def integer(self, low: int, high: int) -> int:
        """An integer in [low, high]."""
        ...

    def pick(self, options: Sequence[T]) -> T:
        """One of `options`."""
        ...


@dataclass
class HypothesisChoices:
    """Decisions drawn by hypothesis (a composite strategy's `draw`), which can shrink them."""

    draw: Callable[[st.SearchStrategy], object]

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))  # type: ignore[return-value]

    def pick(self, options: Sequence[T]) -> T:
        return self.draw(st.sampled_from(options))  # type: ignore[return-value]


@dataclass
class NumpyChoices:
    """Decisions from a seeded numpy generator (fast, for long runs outside pytest)."""

    rng: np.random.Generator

    def integer(self, low: int, high: int) -> int:
        return int(self.rng.integers(low, high + 1))

    def pick(self, options: Sequence[T]) -> T:
        return options[int(self.rng.integers(len(options)))]


@dataclass
class _Builder:
    """A function body under construction: the ops so far and the 4-D values they made."""

    choose: Choices
    weights: np.random.Generator
    block: Block
    values: list[SSAValue] = field(default_factory=list)

    @property
    def current(self) -> SSAValue:
        return self.values[-1]

    def add(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def constant(self, shape: Sequence[int], low: float = -1.0, high: float = 1.0) -> SSAValue:
        array = self.weights.uniform(low, high, size=tuple(shape)).astype(np.float32)
        return self.add(nn.ConstantOp.from_array(array))

    def push(self, op: Operation) -> None:
        self.values.append(self.add(op))

    # ------------------------------------------------------------------ layers
    def conv(self) -> Operation:
        c = nn.shape_of(self.current)[1]
        kind = self.choose.pick(("dense", "dense", "depthwise", "grouped"))
        if kind == "depthwise":
            groups, out = c, c * self.choose.pick((1, 1, 2))
        elif kind == "grouped":
            groups = self.choose.pick([g for g in (1, 2, 3, 4, 8) if c % g == 0])
            # Whole blocks of 4, 8 or 16 outputs per group reach oneDNN's blocked grouped
            # weights (gOIhw8i8o...), which our layouts name only then.
            out = groups * self.choose.pick((1, 2, 3, 4, 8, 16))
        else:
            groups, out = 1, self.choose.pick(self.choose.pick((CHANNELS, WIDE)))
        kh, kw = self.choose.integer(1, 3), self.choose.integer(1, 3)
        pads = [self.choose.integer(0, 2) for _ in range(4)]
        weight = self.constant((out, c // groups, kh, kw))
        bias = self.constant((out,)) if self.choose.integer(0, 1) else None
        return nn.Conv2dOp(
            self.current,
            weight,
            bias,
            pads=pads,
            groups=groups,
            strides=(self.choose.integer(1, 2), self.choose.integer(1, 2)),
            dilations=(self.choose.integer(1, 2), self.choose.integer(1, 2)),
        )

    def conv_transpose(self) -> Operation:
        c = nn.shape_of(self.current)[1]
        groups = self.choose.pick([g for g in (1, 2) if c % g == 0])
        strides = (self.choose.integer(1, 2), self.choose.integer(1, 2))
        dilations = (self.choose.integer(1, 2), self.choose.integer(1, 2))
        output_padding = [
            self.choose.integer(0, max(s, d) - 1) for s, d in zip(strides, dilations, strict=True)
        ]
        weight = self.constant(
            (c, self.choose.pick((1, 3, 8)), self.choose.integer(1, 3), self.choose.integer(1, 3))
        )
        return nn.ConvTranspose2dOp(
            self.current,
            weight,
            pads=[self.choose.integer(0, 1) for _ in range(4)],
            strides=strides,
            dilations=dilations,
            output_padding=output_padding,
            groups=groups,
        )

    def shuffle(self) -> Operation:
        """A transpose of H and W, or a reshape that folds W into H."""
        n, c, h, w = nn.shape_of(self.current)
        if self.choose.integer(0, 1):
            return nn.TransposeOp(self.current, (0, 1, 3, 2))
        return nn.ReshapeOp(self.current, (n, c, h * w, 1))

    def unary(self) -> Operation:
        name = self.choose.pick(
            ("relu", "sigmoid", "tanh", "exp", "neg", "abs", "sqrt", "clip", "leaky_relu")
        )
        x = self.current
        if name == "clip":
            low = self.choose.pick((None, -0.5, 0.0, 0.5))
            return nn.ClipOp(x, low, self.choose.pick((None, 1.0, 2.0)))
        if name == "leaky_relu":
            return nn.LeakyReluOp(x, 0.1)
        return {
            "relu": nn.ReluOp,
            "sigmoid": nn.SigmoidOp,
            "tanh": nn.TanhOp,
            "exp": nn.ExpOp,
            "neg": nn.NegOp,
            "abs": nn.AbsOp,
            "sqrt": nn.SqrtOp,
        }[name](x)

    def binary_with_constant(self) -> Operation:
        n, c, h, w = nn.shape_of(self.current)
        shape = self.choose.pick(((1, c, 1, 1), (c, 1, 1), (1,), (1, 1, h, w), (n, c, h, w)))
        op = self.choose.pick((nn.AddOp, nn.SubOp, nn.MulOp, nn.DivOp))
        if op is nn.DivOp:  # by a constant away from 0: x / (x' ~ 0) amplifies rounding
            return op(self.current, self.constant(shape, 0.5, 2.0))
        constant = self.constant(shape)
        operands = (
            (self.current, constant) if self.choose.integer(0, 1) else (constant, self.current)
        )
        return op(*operands)

    def excitation(self) -> Operation:
        """Squeeze-and-excitation's product: the activations and a per-channel scale computed
        from them (global pool, sigmoid), in either order, multiplied or added."""
        scale = self.add(nn.SigmoidOp(self.add(nn.GlobalAvgPoolOp(self.current))))
        op = self.choose.pick((nn.MulOp, nn.MulOp, nn.AddOp, nn.SubOp))
        operands = (self.current, scale) if self.choose.integer(0, 1) else (scale, self.current)
        return op(*operands)

    def residual(self) -> Operation | None:
        shape = nn.shape_of(self.current)
        earlier = [v for v in self.values[:-1] if nn.shape_of(v) == shape]
        if not earlier:
            return None
        other = self.choose.pick(earlier)
        if self.choose.integer(0, 3) == 0:
            return nn.SumOp([self.current, other, other])
        return nn.AddOp(self.current, other)

    def concat(self) -> Operation | None:
        n, _, h, w = nn.shape_of(self.current)
        same = [v for v in self.values if nn.shape_of(v)[:1] + nn.shape_of(v)[2:] == (n, h, w)]
        inputs = [self.current, *(self.choose.pick(same) for _ in range(self.choose.integer(1, 2)))]
        return nn.ConcatOp(inputs, self.choose.pick((1, -3)))

    def pool(self) -> Operation:
        kernel = (self.choose.integer(1, 3), self.choose.integer(1, 3))
        dilations = (self.choose.integer(1, 2), self.choose.integer(1, 2))
        pads = [self.choose.integer(0, (kernel[i % 2] - 1) * dilations[i % 2]) for i in range(4)]
        common = {
            "kernel": kernel,
            "strides": (self.choose.integer(1, 2), self.choose.integer(1, 2)),
            "pads": pads,
            "dilations": dilations,
            "ceil_mode": bool(self.choose.integer(0, 1)),
        }
        if self.choose.integer(0, 1):
            return nn.MaxPool2dOp(self.current, **common)
        return nn.AvgPool2dOp(
            self.current, count_include_pad=bool(self.choose.integer(0, 1)), **common
        )

    def batch_norm(self) -> Operation:
        c = nn.shape_of(self.current)[1]
        scale, bias, mean = (self.constant((c,)) for _ in range(3))
        var = self.constant((c,), 0.1, 2.0)
        return nn.BatchNormOp(self.current, scale, bias, mean, var, epsilon=1e-5)

    def softmax(self) -> Operation:
        return nn.SoftmaxOp(self.current, self.choose.pick((1, 1, -1)))

    def global_pool(self) -> Operation:
        return nn.GlobalAvgPoolOp(self.current)

    def dense_head(self) -> SSAValue:
        """flatten -> gemm (a fully-connected layer: weights N x K read transposed, as ONNX's
        Gemm holds them and oneDNN's kernel stores them K x N, or K x N; a bias or none) ->
        maybe softmax; ends the chain."""
        flat = self.add(nn.FlattenOp(self.current, 1))
        if self.choose.integer(0, 2) == 0:
            return self.sparse_head(flat)
        features = nn.shape_of(flat)[1]
        out = self.choose.pick((1, 3, 10))
        transposed = bool(self.choose.integer(0, 1))
        weight = self.constant((out, features) if transposed else (features, out))
        bias = self.constant((out,)) if self.choose.integer(0, 1) else None
        result = self.add(nn.GemmOp(flat, weight, bias, trans_b=transposed))
        if self.choose.integer(0, 1):
            result = self.add(nn.SoftmaxOp(result, 1))
        return result

    def sparse_head(self, flat: SSAValue) -> SSAValue:
        """W @ flat^T with W (16 x K) a constant declared CSR, a tenth of it non-zero: the
        sparse kernels where it has 1024 elements (and NaN or Inf in flat meets its zeros).
        16 rows, so that no one dot product's cancellation decides the results' scale."""
        features = nn.shape_of(flat)[1]
        dense = self.weights.uniform(-1, 1, size=(16, features)).astype(np.float32)
        dense[self.weights.random(dense.shape) >= 0.1] = 0
        value = nn.ConstantOp.from_array(dense).value
        weight = self.add(
            nn.ConstantOp(TensorType(f32, dense.shape, StorageAttr("csr")), value=value)
        )
        return self.add(nn.GemmOp(weight, flat, None, trans_b=True))


LAYERS: dict[str, Callable[[_Builder], Operation | None]] = {
    "conv": _Builder.conv,
    "unary": _Builder.unary,
    "binary": _Builder.binary_with_constant,
    "residual": _Builder.residual,
    "concat": _Builder.concat,
    "pool": _Builder.pool,
    "batch_norm": _Builder.batch_norm,
    "softmax": _Builder.softmax,
    "global_pool": _Builder.global_pool,
    "conv_transpose": _Builder.conv_transpose,
    "shuffle": _Builder.shuffle,
    "excitation": _Builder.excitation,
}


def random_program(choose: Choices) -> str:
    """The MLIR text of a random valid program (see the module docstring)."""
    weights = np.random.default_rng(choose.integer(0, 2**32 - 1))
    shape = (
        choose.integer(1, 2),
        choose.pick(choose.pick((CHANNELS, WIDE))),
        choose.integer(1, 12),
        choose.integer(3, 12),
    )
    block = Block(arg_types=[TensorType(f32, shape)])
    block.args[0].name_hint = "x"
    builder = _Builder(choose, weights, block, [block.args[0]])
    for _ in range(choose.integer(1, 6)):
        layer = LAYERS[choose.pick(("conv", *LAYERS))]  # convolutions twice as often
        try:
            op = layer(builder)
        except VerifyException:  # e.g. a window larger than the padded input: skip it
            continue
        if op is not None:
            builder.push(op)
    results = [builder.current]
    if choose.integer(0, 3) == 0:
        results = [builder.dense_head()]
    if len(builder.values) > 2 and choose.integer(0, 2) == 0:
        results.append(choose.pick(builder.values[1:-1]))  # an intermediate, returned too
    block.add_op(func.ReturnOp(*results))
    function = func.FuncOp(
        "main", ([a.type for a in block.args], [r.type for r in results]), Region(block)
    )
    text = io.StringIO()
    print_module(ModuleOp([function]), text)
    return text.getvalue()


@st.composite
def random_programs(draw: Callable[[st.SearchStrategy], object]) -> str:
    """Hypothesis strategy of random program texts."""
    return random_program(HypothesisChoices(draw))


def compile_text(text: str, target: str, padding: bool, nnan: bool = False) -> ModuleOp:
    """Parses `text` and runs `default-pipeline{target padding nnan}` on it."""
    ctx = make_context()
    module = parse_module(ctx, text, "<random>")
    spec = PIPELINE.format(target=target, padding=str(padding).lower(), nnan=str(nnan).lower())
    run_pipeline(parse_pipeline(spec, get_all_passes()), ctx, module)
    return module


def poison(inputs: list[np.ndarray], seed: int) -> None:
    """Writes a NaN, an Inf and a -Inf at random positions of the first input (in place)."""
    flat = inputs[0].reshape(-1)
    positions = np.random.default_rng(seed).choice(flat.size, min(3, flat.size), replace=False)
    flat[positions] = [np.nan, np.inf, -np.inf][: len(positions)]


def check_program(
    text: str,
    seed: int = 0,
    nan_and_inf: bool = False,
    inputs: list[np.ndarray] | None = None,
    generated: bool = False,
) -> None:
    """Asserts that every target and padding setting gives the unoptimised results, on
    `inputs` or standard-normal inputs from `seed` (with a NaN, an Inf and a -Inf if
    `nan_and_inf`). With `generated`, the generated module of each compiled variant must
    too, run twice: on those inputs, then on others with NaN and infinities where those
    had none and none where they had some (for the variant whose promise allows it)."""
    module = parse_module(make_context(), text, "<random>")
    module.verify()
    if inputs is None:
        inputs = random_inputs(module, seed)
        if nan_and_inf:
            poison(inputs, seed)
    unoptimised = Interpreter(module)
    expected = unoptimised.run(inputs)
    finite = all(np.isfinite(x).all() for x in (*inputs, *expected))
    runs = [(inputs, expected, finite)]
    if generated:
        second = random_inputs(module, seed + 1)
        if finite:
            poison(second, seed + 1)
        results = unoptimised.run(second)
        runs.append((second, results, all(np.isfinite(x).all() for x in (*second, *results))))
    # nnan (fast math: oneDNN's relu and clip post-ops) where its promise holds: no NaN.
    variants = [(target, padding, False) for target in TARGETS for padding in (True, False)]
    variants += [("onednn", True, True)] if "onednn" in TARGETS and finite else []
    # oneDNN asked for blocked activations: padded channels between its convolutions (blocks
    # of 16 run its avx512_core code where the machine has it, else fall back per op).
    variants += (
        [("onednn-nchw8c", True, False), ("onednn-nchw16c", True, False)]
        if "onednn" in TARGETS
        else []
    )
    for target, padding, nnan in variants:
        planned = compile_text(text, target, padding, nnan)
        actual = [("interpreter", expected, Interpreter(planned).run(inputs))]
        if generated:
            with tempfile.TemporaryDirectory(prefix="nnlayout-random-") as folder:
                program = import_generated(translate(planned, Path(folder) / "model.py").code)
                actual += [
                    (f"generated module, run {i}", want, program.run(*given))
                    for i, (given, want, finite_run) in enumerate(runs, 1)
                    if finite_run or not nnan
                ]
        for backend, want, got in actual:
            try:
                assert_same(want, got)
            except AssertionError as error:
                raise AssertionError(
                    f"target={target} padding={padding} nnan={nnan} ({backend}): {error}"
                ) from None
