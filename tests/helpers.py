"""What the test modules share, so that no test module imports another (imported as
`nnlayout.tests.helpers`):

* programs through the pipelines: compile a module for a target, random inputs, the
  comparison of results (`assert_same`) and the semantic check over every target and padding;
* ops built on typed values and packed into a kernel's layouts (the blocked kernels' tests);
* bit-exact comparisons and special values (the prepared kernels' tests);
* a tool run in-process on bad input, and small ONNX models for it.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp, NoneAttr, TensorType, f32
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import LayoutAttr, LayoutSpec, ReorderOp, encoding_name
from nnlayout.dialects.nn import ConstantOp, shape_of
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.kernels import blocked
from nnlayout.kernels.blocked import BlockedOptions
from nnlayout.kernels.onednn.binding import available as onednn_available
from nnlayout.kernels.registry import Kernel, Target, resolve_layouts
from nnlayout.kernels.targets import TARGETS
from nnlayout.runtime.interpreter import Interpreter, argument_specs, find_entry, index_bounds
from nnlayout.tools import import_onnx, opt, run, translate
from nnlayout.tools.driver import parse_pipeline, run_pipeline, run_tool
from nnlayout.transforms import get_all_passes

# ---------------------------------------------------------- test tiers (docs/testing.md)
# Whether the sweeps over every target and padding run in full: under --runslow (set by
# tests/conftest.py); the default tier runs `swept` pairs.
FULL_SWEEPS = False


def swept(targets: Sequence[str], key: bytes) -> list[tuple[str, bool]]:
    """The (target, padding) pairs a check sweeps: all of them in the full tier; in the
    default tier two, picked by `key` (the model's bytes), which spreads the tests over the
    pairs: a target other than ref with padding on, and any target with it off."""
    if FULL_SWEEPS:
        return [(target, padding) for target in targets for padding in (True, False)]
    padded = [target for target in targets if target != "ref"] or list(targets)
    pick = zlib.crc32(key)
    return [
        (padded[pick % len(padded)], True),
        (targets[pick // len(padded) % len(targets)], False),
    ]


def tiered(values: Sequence[Any], default: Sequence[Any]) -> list[Any]:
    """`values` as parameters for pytest.mark.parametrize, those not in `default` marked
    slow: a sweep whose `default` subset the default tier runs, the rest the full tier
    (pytest --runslow). A tuple value stands for several arguments."""
    return [
        value
        if value in default
        else pytest.param(
            *(value if isinstance(value, tuple) else (value,)), marks=pytest.mark.slow
        )
        for value in values
    ]


# ---------------------------------------------------------- programs through the pipelines
# oneDNN runs them too where it is installed, with post-ops fused into its convolutions, in
# its own formats and asked for blocked (padded) activations.
PIPELINE_TARGETS = [
    "ref",
    "avx2",
    "avx512",
    *(["onednn", "onednn-nchw8c", "onednn-nchw16c"] if onednn_available() else []),
]
LAYOUT_PIPELINE = (
    "extend-ranks,select-dispatch{{target={target} padding={padding}}},insert-layouts,"
    "propagate-layouts,fold-constants"
)
DEFAULT_PIPELINE = "default-pipeline{{target={target} padding={padding}}}"
# default-pipeline's passes before select-dispatch (transforms/default_pipeline.py)
PRE_DISPATCH = (
    "fuse-activations,extend-ranks,fold-batch-norm,fold-pad,split-image-conv,fuse-channel-shuffle,"
    "fold-scatter-transposes,nest-concats"
)


def compile_module(
    module: ModuleOp, target: str, padding: bool, pipeline: str = LAYOUT_PIPELINE
) -> ModuleOp:
    """A copy of `module` compiled by `pipeline` (a template with {target} and {padding}):
    the layout passes by default, or DEFAULT_PIPELINE (bufferized and planned)."""
    compiled = module.clone()
    spec = pipeline.format(target=target, padding=str(padding).lower())
    run_pipeline(parse_pipeline(spec, get_all_passes()), make_context(), compiled)
    return compiled


def compiled_without(
    module: ModuleOp, target: str, padding: bool, left_out: type[ModulePass]
) -> ModuleOp:
    """A copy of `module` through the default pipeline's passes but `left_out` (the program
    a pass is compared with)."""
    from nnlayout.transforms.default_pipeline import DefaultPipelinePass

    compiled = module.clone()
    for one_pass in DefaultPipelinePass(target=target, padding=padding).passes():
        if not isinstance(one_pass, left_out):
            one_pass.apply(make_context(), compiled)
    return compiled


def plan_figure(module: ModuleOp, name: str) -> int:
    """A figure plan-memory records on the planned entry function (`nnlayout.arena_bytes`,
    `nnlayout.lower_bound_bytes`, ...)."""
    return find_entry(module).attributes[name].value.data  # type: ignore[attr-defined]


def count_ops(module: ModuleOp, op_type: type[Operation]) -> int:
    """How many ops of `op_type` the module has."""
    return sum(isinstance(op, op_type) for op in module.walk())


def random_inputs(module: ModuleOp, seed: int = 0) -> list[np.ndarray]:
    """`nnlayout-run --random-inputs seed`'s inputs for `module`'s entry."""
    function = find_entry(module)
    return run.random_inputs(argument_specs(function), seed, index_bounds(function))


def assert_same(expected: tuple[np.ndarray, ...], actual: tuple[np.ndarray, ...]) -> None:
    for want, got in zip(expected, actual, strict=True):
        assert got.shape == want.shape
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        finite = np.isfinite(want)
        np.testing.assert_array_equal(
            got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)]
        )
        scale = max(float(np.abs(want[finite]).max(initial=0.0)), 1e-30)
        assert float(np.abs(got[finite] - want[finite]).max(initial=0.0)) <= 1e-4 * scale


def check_semantics(
    module: ModuleOp,
    inputs: list[np.ndarray],
    source: Path | None = None,
    targets: list[str] = PIPELINE_TARGETS,
    blocks: bool = True,
) -> None:
    """Each target, padding on and off, gives the interpreter's results, through the layout
    passes and the whole pipeline; with `blocks`, some op runs on blocked data."""
    where = None if source is None else str(source)
    expected = Interpreter(module, source_path=where).run(inputs)
    for target in targets:
        for padding in (True, False):
            compiled = compile_module(module, target, padding)
            # The test means nothing if nothing is blocked.
            if blocks and target != "ref" and padding:
                assert any(
                    encoding_name(op.results[0].type) not in ("", "csr")
                    for op in compiled.walk()
                    if kernel_of(op) is not None
                )
            actual = Interpreter(compiled, source_path=where).run(inputs)
            assert_same(expected, actual)
            bufferized = compile_module(module, target, padding, DEFAULT_PIPELINE)
            assert_same(expected, Interpreter(bufferized, source_path=where).run(inputs))


def parse(text: str) -> ModuleOp:
    return parse_module(make_context(), text, "<test>")


# conv(3 -> 5 channels) -> f -> conv(5 -> 7): f(0) != 0 must not leak through the padding lanes.
TRAP_UNARY = """
func.func @f(%x: tensor<2x3x9x9xf32>) -> tensor<2x7x9x9xf32> {{
  %w1 = nn.constant dense<{w1}> : tensor<5x3x3x3xf32>
  %c1 = nn.conv2d %x, %w1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x3x9x9xf32>, tensor<5x3x3x3xf32>) -> tensor<2x5x9x9xf32>
  %f = {unary} %c1 {attributes}: tensor<2x5x9x9xf32>
  %w2 = nn.constant dense<{w2}> : tensor<7x5x3x3xf32>
  %c2 = nn.conv2d %f, %w2 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x5x9x9xf32>, tensor<7x5x3x3xf32>) -> tensor<2x7x9x9xf32>
  func.return %c2 : tensor<2x7x9x9xf32>
}}
"""


def dense(shape: tuple[int, ...], seed: int) -> str:
    """A nested literal of seeded random values, for `dense<...>`."""
    return json.dumps(np.random.default_rng(seed).standard_normal(shape).round(3).tolist())


def activation_reorders(module: ModuleOp) -> int:
    return sum(
        isinstance(op, ReorderOp) and not isinstance(op.input.owner, ConstantOp)
        for op in module.walk()
    )


# ------------------------------------------------------ ops in a kernel's layouts
KERNELS: dict[str, Kernel] = {k.name: k for k in blocked.kernels()}
AVX2, AVX512 = TARGETS["avx2"], TARGETS["avx512"]
BLOCKS = (8, 16)
# min_blocked_macs = 0: correctness tests run tiny convolutions the real targets would refuse.
TEST_TARGETS = {
    b: Target(f"test{b}", "test", ("blocked",), (BlockedOptions(block=b),)) for b in (4, *BLOCKS)
}


def tensor(shape: Sequence[int], layout: str = "", element_type: Attribute = f32) -> TensorType:
    return TensorType(element_type, shape, LayoutAttr(layout) if layout else NoneAttr())


def build_plain(
    build: Callable[..., Operation], arrays: Sequence[np.ndarray], **kwargs: Any
) -> Operation:
    return build(*(create_ssa_value(tensor(a.shape)) for a in arrays), **kwargs)


def build_in_layouts(
    name: str,
    target: Target,
    build: Callable[..., Operation],
    arrays: Sequence[np.ndarray],
    any_layout: str = "",
    **kwargs: Any,
) -> tuple[Operation, list[np.ndarray], str]:
    """Asks kernel `name` for its layouts on `target` (`any_layout` stands for "*"); returns
    the op built on values of those layouts and typed as insert-layouts types it, `arrays`
    packed into them, and the result's layout."""
    kernel = KERNELS[name]
    plain = build_plain(build, arrays, **kwargs)
    operands, results = kernel.operand_and_result_layouts(plain, target)
    operands = resolve_layouts(operands, any_layout)
    result_layout = resolve_layouts(results, any_layout)[0]
    op = build(
        *(
            create_ssa_value(tensor(a.shape, layout))
            for a, layout in zip(arrays, operands, strict=True)
        ),
        **kwargs,
    )
    if result_layout:  # a plain image's convolution writes blocks
        Rewriter.replace_value_with_new_type(
            op.results[0], tensor(shape_of(op.results[0]), result_layout)
        )
    op.verify()
    packed = [
        LayoutSpec.parse(layout).pack(a) if layout else a
        for a, layout in zip(arrays, operands, strict=True)
    ]
    return op, packed, result_layout


def conv(*values: Any, **kwargs: Any) -> nn.Conv2dOp:
    return nn.Conv2dOp(*values, **kwargs)


def depthwise(*values: Any, **kwargs: Any) -> nn.Conv2dOp:
    return nn.Conv2dOp(*values, groups=shape_of(values[0])[1], **kwargs)


def unary(op_type: type[nn.UnaryOp], **kwargs: Any) -> Callable[..., Operation]:
    return lambda x: op_type(x, **kwargs)


UNARY_CASES = {
    "relu": unary(nn.ReluOp),
    "leaky_relu": unary(nn.LeakyReluOp, alpha=0.2),
    "sigmoid": unary(nn.SigmoidOp),
    "tanh": unary(nn.TanhOp),
    "exp": unary(nn.ExpOp),
    "neg": unary(nn.NegOp),
    "abs": unary(nn.AbsOp),
    "sqrt": unary(nn.SqrtOp),
    "clip": unary(nn.ClipOp, min=-0.5, max=0.5),
    "clip_min_positive": unary(nn.ClipOp, min=0.5),
    "clip_max_negative": unary(nn.ClipOp, max=-0.25),
    "clip_unbounded": unary(nn.ClipOp),
    "hardswish": unary(nn.HardSwishOp),
    "hardsigmoid": unary(nn.HardSigmoidOp, alpha=0.2, beta=0.5),  # 0.5 at 0
    "gelu": unary(nn.GeluOp),
    "erf": unary(nn.ErfOp),
    "elu": unary(nn.EluOp, alpha=0.5),
    "selu": unary(nn.SeluOp),
    "softplus": unary(nn.SoftplusOp),  # log 2 at 0
    "mish": unary(nn.MishOp),
    "swish": unary(nn.SwishOp),
    "pow": unary(nn.PowOp, exponent=0.0),  # 1 at 0
    "reciprocal": unary(nn.ReciprocalOp),  # inf at 0
    "log": unary(nn.LogOp),  # -inf at 0
}
NARY_CASES: dict[str, Callable[..., Operation]] = {
    "add": nn.AddOp,
    "sub": nn.SubOp,
    "mul": nn.MulOp,
    "div": nn.DivOp,
    "max": nn.MaxOp,
    "min": nn.MinOp,
    "prelu": nn.PReluOp,
    "sum": lambda *xs: nn.SumOp(xs),
}


def batch_norm(*values: Any, **kwargs: Any) -> nn.BatchNormOp:
    return nn.BatchNormOp(*values, **kwargs)


def max_pool(x: Any, **kwargs: Any) -> nn.MaxPool2dOp:
    return nn.MaxPool2dOp(x, **kwargs)


def avg_pool(x: Any, **kwargs: Any) -> nn.AvgPool2dOp:
    return nn.AvgPool2dOp(x, **kwargs)


def concat(*values: Any, axis: int = 1) -> nn.ConcatOp:
    return nn.ConcatOp(values, axis)


# ------------------------------------------------------------------ the very bits
SPECIAL = np.array(
    [0.0, -0.0, np.nan, np.inf, -np.inf, 1e-45, -1e-45, 6.0, -6.0, 0.5, -0.5], np.float32
)
SENTINEL = np.float32(7.25)


def special(rng: np.random.Generator, *shape: int, signed_zeros_only: bool = False) -> np.ndarray:
    """Normal values, a third of them replaced by NaN, +-Inf, +-0.0, denormals, bounds;
    with `signed_zeros_only`, only by +-0.0 (windows where max(-0.0, +0.0) matters)."""
    array = (rng.standard_normal(shape) * 4).astype(np.float32)
    spots = rng.random(shape) < 1 / 3
    choices = SPECIAL[:2] if signed_zeros_only else SPECIAL
    array[spots] = rng.choice(choices, size=int(spots.sum()))
    return array


def same_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(got, want, equal_nan=True), "values differ"
    real = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[real]), np.signbit(want[real])), "signed zeros differ"


def interior(shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """A buffer one element larger on each side of every axis but the first, filled with
    SENTINEL, and the strided view of its interior."""
    big = np.full((shape[0], *(s + 2 for s in shape[1:])), SENTINEL, np.float32)
    return big, big[(slice(None), *(slice(1, 1 + s) for s in shape[1:]))]


# ------------------------------------------------------------ tools on bad input
TOOLS: dict[str, Callable[[Sequence[str]], int]] = {
    "nnlayout-opt": opt.main,
    "nnlayout-run": run.main,
    "nnlayout-import": import_onnx.main,
    "nnlayout-translate": translate.main,
}


def run_in_process(
    tool: str, args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, str]:
    """Runs `tool` through `run_tool`, the console scripts' own entry; returns its exit
    status, stdout and stderr."""
    monkeypatch.delenv("NNLAYOUT_TRACEBACK", raising=False)
    status = run_tool(TOOLS[tool], args)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def tool_process(
    tool: str, args: Sequence[str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """What `tool` run as a process gives (exit status, stdout, stderr), from its console
    entry's body (`run_tool`) run in this process: a process would spend 0.7 s (2 s for
    nnlayout-import, which imports onnx) importing what this one has. For tests of a tool's
    arguments and messages; where the process itself is the point (exit codes of a real
    process, closed pipes, plugins loaded with --load, environment variables) tests start
    one (tests/tools/test_bad_processes.py, test_cli.py, test_cli_plugins.py)."""
    out, err = io.StringIO(), io.StringIO()
    saved_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO((stdin or "").encode()), encoding="utf-8")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = run_tool(TOOLS[tool], list(args))
            except SystemExit as exit:  # argparse's --help and usage errors
                status = exit.code if isinstance(exit.code, int) else int(exit.code is not None)
    finally:
        sys.stdin = saved_stdin
    return subprocess.CompletedProcess([tool, *args], status, out.getvalue(), err.getvalue())


def assert_one_clean_error(status: int, out: str, err: str, expected: str) -> None:
    """Exit 1, nothing on stdout, the expected first line, and one diagnostic: a message
    (with the source line and a caret, or a note naming the op, when it has a location)."""
    assert status == 1, err
    assert out == ""
    assert "Traceback" not in err and "internal error" not in err, err
    lines = err.rstrip("\n").splitlines()
    assert expected in lines[0], err
    assert len(lines) <= 3, err
    if len(lines) == 3:  # the source line and a caret under the column
        assert lines[2].strip() == "^", err
    elif len(lines) == 2:
        assert lines[1].startswith("note: in operation: "), err


def onnx_model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, list],
    outputs: list[str],
    initializers: dict[str, np.ndarray] | None = None,
    input_type: int = TensorProto.FLOAT,
    opset: int = 17,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "bad",
        [helper.make_tensor_value_info(n, input_type, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, input_type, None) for n in outputs],
        [numpy_helper.from_array(v, n) for n, v in (initializers or {}).items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def typed_model(
    nodes: list[onnx.NodeProto],
    inputs: Mapping[str, tuple[int, Sequence[int]]],
    outputs: Mapping[str, tuple[int, Sequence[int]]],
    constants: Mapping[str, np.ndarray],
    domains: Sequence[str] = (),
) -> onnx.ModelProto:
    """An opset-17 model of `nodes`: graph inputs and outputs by name -> (ONNX element type,
    shape), `constants` its initializers, each of `domains` at version 1 (com.microsoft)."""
    graph = helper.make_graph(
        nodes,
        "model",
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in outputs.items()],
        [numpy_helper.from_array(v, n) for n, v in constants.items()],
    )
    opsets = [helper.make_opsetid("", 17), *(helper.make_opsetid(d, 1) for d in domains)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=9)


def like_onnxruntime_everywhere(model: onnx.ModelProto, inputs: Sequence[np.ndarray]) -> ModuleOp:
    """`model` imported (constants inline) gives onnxruntime's one output on `inputs`: by the
    interpreter, then on every target, padding on and off, interpreter and generated module
    (`everywhere`); masks and integers bit for bit, floats within `assert_close`. Returns the
    module."""
    from nnlayout.frontends.onnx import import_model

    (want,) = onnxruntime_outputs(model, inputs)
    module = import_model(model, inline_limit=1 << 20).module

    def check(got: np.ndarray, where: str) -> None:
        try:
            if want.dtype.kind in "biu":  # masks and integers: exact
                assert got.dtype == want.dtype, (got.dtype, want.dtype)
                np.testing.assert_array_equal(got, want)
            else:
                assert_close(want, got)
        except AssertionError as error:
            raise AssertionError(f"{where}: {error}") from None

    check(Interpreter(module).run(list(inputs))[0], "imported")
    for target, padding, _, (got,) in everywhere(module, inputs):
        check(got, f"{target} {padding}")
    return module


def onnx_file(model: onnx.ModelProto) -> Callable[[Path], list[str]]:
    """nnlayout-import arguments: `model` saved as m.onnx in a folder, imported to m.mlir."""

    def args(folder: Path) -> list[str]:
        (folder / "m.onnx").write_bytes(model.SerializeToString())
        return [str(folder / "m.onnx"), "-o", str(folder / "m.mlir")]

    return args


# ------------------------------------------------ exporter patterns against onnxruntime
ALL_TARGETS = [*PIPELINE_TARGETS, "host"]


def onnxruntime_outputs(model: onnx.ModelProto, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """`model`'s outputs by onnxruntime on `inputs` (in graph-input order, initializers aside)."""
    import onnxruntime

    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, inputs, strict=True)))


def assert_close(
    want: np.ndarray, got: np.ndarray, tolerance: float = 1e-4, step: float | None = None
) -> None:
    """Same shape; |got - want| within `tolerance` of want's largest magnitude (1 at least),
    or, given a quantization `step`, within one step (and a rounding's worth)."""
    assert got.shape == want.shape, (got.shape, want.shape)
    finite = np.abs(want[np.isfinite(want)]) if want.dtype.kind == "f" else np.abs(want)
    scale = max(1.0, float(finite.max(initial=0.0)))  # infinities and NaN compared exactly
    atol = tolerance * scale if step is None else step * 1.001
    np.testing.assert_allclose(got, want, rtol=0, atol=atol)


def assert_runs_give(
    want: Sequence[np.ndarray],
    compiled: ModuleOp,
    inputs: Sequence[np.ndarray],
    source: str,
    where: str,
    tolerance: float = 1e-4,
    step: float | None = None,
) -> None:
    """`compiled` (planned, its weights beside `source`) gives `want` (`assert_close`) through
    the interpreter and the generated module; a failure names `where` and the backend."""
    from nnlayout.lowering.to_numpy import run_generated

    for backend, got in (
        ("interpreter", Interpreter(compiled, source_path=source).run(list(inputs))),
        ("generated", run_generated(compiled, list(inputs), source_path=source)),
    ):
        assert len(got) == len(want), (where, backend)
        for expected, actual in zip(want, got, strict=True):
            try:
                assert_close(expected, actual, tolerance, step)
            except AssertionError as error:
                raise AssertionError(f"{where} {backend}: {error}") from None


def check_against_onnxruntime(
    model: onnx.ModelProto,
    folder: Path,
    *,
    targets: Sequence[str] = ALL_TARGETS,
    seed: int = 0,
    tolerance: float = 1e-4,
    step: float | None = None,
    reference: onnx.ModelProto | None = None,
) -> ModuleOp:
    """Imports `model` as `nnlayout-import` does (weights file and all), and checks that the
    interpreter on the imported module, and on each target with padding on and off both the
    interpreter and the generated module of the default pipeline, give onnxruntime's outputs
    on the same seeded inputs (within `tolerance`, or one quantization `step`; in the default
    tier, two of those target and padding pairs: `swept`). onnxruntime runs `reference` if
    given (an equivalent model: for an op it has no CPU kernel of). Returns the imported
    module."""
    from nnlayout.frontends.onnx import import_to_files

    onnx_path = folder / "model.onnx"
    onnx_path.write_bytes(model.SerializeToString())
    module = import_to_files(onnx_path)
    source = str(onnx_path.with_suffix(".mlir"))
    inputs = random_inputs(module, seed)
    expected = onnxruntime_outputs(model if reference is None else reference, inputs)
    for got in (Interpreter(module, source_path=source).run(inputs),):
        for want, actual in zip(expected, got, strict=True):
            assert_close(want, actual, tolerance, step)
    for target, padding in swept(targets, model.SerializeToString()):
        compiled = compile_module(module, target, padding, DEFAULT_PIPELINE)
        where = f"target={target} padding={padding}"
        assert_runs_give(expected, compiled, inputs, source, where, tolerance, step)
    return module


def everywhere(
    module: ModuleOp, inputs: Sequence[np.ndarray]
) -> Iterator[tuple[str, bool, ModuleOp, tuple[np.ndarray, ...]]]:
    """`module` through the default pipeline on every target (ALL_TARGETS), padding on and
    off: each (target, padding, compiled module, results) of its interpreter and then of its
    generated module on `inputs`."""
    from nnlayout.lowering.to_numpy import run_generated

    for target in ALL_TARGETS:
        for padding in (True, False):
            compiled = compile_module(module, target, padding, DEFAULT_PIPELINE)
            for got in (Interpreter(compiled).run(inputs), run_generated(compiled, inputs)):
                yield target, padding, compiled, got


def chosen_kernels(module: ModuleOp, op_type: type[Operation]) -> set[str]:
    """The kernels dispatch gave the ops of `op_type` in `module`."""
    return {
        kernel.kernel_name.data
        for op in module.walk()
        if isinstance(op, op_type) and (kernel := kernel_of(op)) is not None
    }


# ------------------------------------------------------------------- quantized models
def small_cnn() -> onnx.ModelProto:
    """conv-relu-conv-add-maxpool-global average pool-flatten-gemm on a [1, 3, 8, 8] input,
    seeded float32 weights."""
    rng = np.random.default_rng(0)

    def init(name: str, shape: tuple[int, ...], scale: float) -> onnx.TensorProto:
        return numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name
        )

    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "r1"], ["a"]),
        helper.make_node("MaxPool", ["a"], ["m"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["m"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1),
    ]
    weights = [
        init("w1", (8, 3, 3, 3), 0.2),
        init("b1", (8,), 0.1),
        init("w2", (8, 8, 3, 3), 0.1),
        init("b2", (8,), 0.1),
        init("wf", (10, 8), 0.3),
        init("bf", (10,), 0.1),
    ]
    graph = helper.make_graph(
        nodes,
        "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def quantize_with_onnxruntime(
    model: onnx.ModelProto,
    folder: Path,
    qoperator: bool,
    signed_activations: bool = False,
    per_channel: bool = True,
) -> onnx.ModelProto:
    """`model` quantized by onnxruntime's `quantize_static`: s8 weights (per channel by
    default), u8 activations (s8 with `signed_activations`), calibrated on 8 seeded random
    inputs; QDQ form, or QOperator (`benchmarks/zoo_int8.py`'s `quantize`, not pre-processed)."""
    from nnlayout.benchmarks.zoo_int8 import quantize

    source = folder / "float.onnx"
    onnx.save(model, source)
    return quantize(
        source,
        folder / "quantized.onnx",
        preprocess=False,
        qoperator=qoperator,
        signed_activations=signed_activations,
        per_channel=per_channel,
    )


def output_step(model: onnx.ModelProto) -> float:
    """The scale of the DequantizeLinear that makes the (first) graph output (an initializer
    or, as torch writes it, a Constant node): one quantization step of it."""
    from nnlayout.benchmarks.zoo_int8 import output_steps

    step = output_steps(model)[0]
    assert step > 0, "the first output is not made by a DequantizeLinear"
    return step
