"""`nnlayout-translate --to numpy`: the generated module computes what the interpreter computes.

Each program goes through `default-pipeline{target=T}` for T in ref, avx2, avx512; its planned
function is translated, imported and run twice, and its results are compared with the
interpreter on the same planned IR (the same kernels: equal up to rounding) and with the
unoptimised interpreter (1e-4 of the largest magnitude). The programs are the small zoo models
(imported from ONNX, weights in an .npz beside the IR) and padding traps: f(0) != 0 between
convolutions, -inf borders of max pooling, concats of odd channel counts, softmax over
padded channels.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.plan import ARENA_BYTES as ARENA_ATTR
from nnlayout.examples.make_models import ZOO, build
from nnlayout.frontends.onnx import import_model, write_imported
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.kernels.onednn.binding import available as onednn_available
from nnlayout.lowering.program import load_time_constants
from nnlayout.lowering.to_numpy import import_generated, translate
from nnlayout.runtime.binding import evaluate_constants
from nnlayout.runtime.interpreter import Interpreter, find_entry
from nnlayout.tests.helpers import TRAP_UNARY, assert_same, dense, random_inputs, tiered
from nnlayout.tools.driver import parse_pipeline, run_pipeline
from nnlayout.transforms import get_all_passes

TARGETS = ["ref", "avx2", "avx512"]

# Two convolutions into one concat (5 + 3 channels: neither a multiple of a block), sigmoid
# (f(0) != 0), a convolution reading the concat through a halo, max pooling with a -inf
# border over all-negative data, softmax over channels.
TRAPS = f"""
func.func @traps(%x: tensor<1x4x12x12xf32>) -> (tensor<1x6x6x6xf32>, tensor<1x8x12x12xf32>) {{
  %w1 = nn.constant dense<{dense((5, 4, 3, 3), 11)}> : tensor<5x4x3x3xf32>
  %a = nn.conv2d %x, %w1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x4x12x12xf32>, tensor<5x4x3x3xf32>) -> tensor<1x5x12x12xf32>
  %w2 = nn.constant dense<{dense((3, 4, 3, 3), 12)}> : tensor<3x4x3x3xf32>
  %b = nn.conv2d %x, %w2 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x4x12x12xf32>, tensor<3x4x3x3xf32>) -> tensor<1x3x12x12xf32>
  %cat = nn.concat %a, %b axis 1 : (tensor<1x5x12x12xf32>, tensor<1x3x12x12xf32>) -> tensor<1x8x12x12xf32>
  %s = nn.sigmoid %cat : tensor<1x8x12x12xf32>
  %w3 = nn.constant dense<{dense((6, 8, 3, 3), 13)}> : tensor<6x8x3x3xf32>
  %c = nn.conv2d %s, %w3 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x8x12x12xf32>, tensor<6x8x3x3xf32>) -> tensor<1x6x12x12xf32>
  %n = nn.abs %c : tensor<1x6x12x12xf32>
  %m = nn.neg %n : tensor<1x6x12x12xf32>
  %p = nn.max_pool2d %m kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x6x12x12xf32> -> tensor<1x6x6x6xf32>
  %o = nn.softmax %cat axis 1 : tensor<1x8x12x12xf32>
  func.return %p, %o : tensor<1x6x6x6xf32>, tensor<1x8x12x12xf32>
}}
"""


def compile_file(source: Path, target: str) -> ModuleOp:
    ctx = make_context()
    module = parse_module(ctx, source.read_text(), str(source))
    run_pipeline(
        parse_pipeline(f"default-pipeline{{target={target}}}", get_all_passes()), ctx, module
    )
    return module


def generated(planned: ModuleOp, source: Path, folder: Path) -> ModuleType:
    translation = translate(planned, folder / "model.py", source_path=str(source))
    return import_generated(translation.code)


@cache
def unoptimised(source: Path) -> tuple[list[np.ndarray], tuple[np.ndarray, ...]]:
    """Seeded inputs of the program in `source`, and its results from the interpreter
    without any pass (once per program: the zoo tests share it across targets)."""
    original = parse_module(make_context(), source.read_text(), str(source))
    inputs = random_inputs(original)
    return inputs, Interpreter(original, source_path=str(source)).run(inputs)


def check_generated(source: Path, target: str, folder: Path) -> ModuleType:
    """Compiles, translates and runs `source` (see the module doc); returns the module."""
    inputs, expected = unoptimised(source)
    planned = compile_file(source, target)
    module = generated(planned, source, folder)
    first = module.run(*inputs)
    module.ARENA[:] = 0xFF  # NaN in every float: nothing may depend on the previous run
    second = module.run(*inputs)
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
    assert_same(Interpreter(planned, source_path=str(source)).run(inputs), first)
    assert_same(expected, first)
    return module


@cache
def zoo_source(name: str, folder: Path) -> Path:
    """The small zoo model `name` imported from ONNX, as .mlir + .npz files in `folder`."""
    source = folder / f"{name}.mlir"
    write_imported(import_model(build(name, small=True)), source)
    return source


@pytest.fixture(scope="module")
def zoo_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("zoo")


# The default tier: three models, each on another target.
@pytest.mark.parametrize(
    ("name", "target"),
    tiered(
        [(name, target) for name in sorted(ZOO) for target in TARGETS],
        [("densenet121", "avx2"), ("se_resnet50", "avx512"), ("mobilenet_v2", "ref")],
    ),
)
def test_small_zoo_models(name: str, target: str, zoo_folder: Path, tmp_path: Path) -> None:
    source = zoo_source(name, zoo_folder)
    assert source.with_suffix(".npz").is_file()  # external weights, copied beside the module
    module = check_generated(source, target, tmp_path)
    assert (tmp_path / "model.weights.npz").is_file()
    assert module.ARENA_BYTES > 0


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("program", ["traps", "sigmoid", "clip"])
def test_padding_traps(program: str, target: str, tmp_path: Path) -> None:
    text = (
        TRAPS
        if program == "traps"
        else TRAP_UNARY.format(
            unary=f"nn.{program}",
            attributes="min 0.5 max 2.0 " if program == "clip" else "",
            w1=dense((5, 3, 3, 3), 1),
            w2=dense((7, 5, 3, 3), 2),
        )
    )
    source = tmp_path / "program.mlir"
    source.write_text(text)
    module = check_generated(source, target, tmp_path)
    planned = compile_file(source, target)
    function = find_entry(planned)
    code = (tmp_path / "model.py").read_text()
    # One kernel call per nn.compute, in order, each commented with its op: K[i](ins, outs),
    # or kI() for kernel I bound to its buffers at import.
    bound = dict(re.findall(r"^(\w+) = PROGRAM\.on\((\d+), ", code, re.MULTILINE))
    calls = re.findall(r"^ +(?:K\[(\d+)\]\(.*\)|(\w+)\(\))  # %\w+ = (\S+)", code, re.MULTILINE)
    computes = [op for op in function.body.block.ops if isinstance(op, ComputeOp)]
    assert [int(i or bound[step]) for i, step, _ in calls] == list(range(len(computes)))
    assert [name for _, _, name in calls] == [op.inner.name for op in computes]
    # The first op reads the argument, passed anew on every run.
    assert calls[0][0] == "0" and bound
    assert function.attributes[ARENA_ATTR].value.data == module.ARENA_BYTES
    assert module.ARENA.ctypes.data % 64 == 0
    if target != "ref":  # halo'd inputs are filled per run, -inf for max pooling
        assert "fill_border(" in code
    if program == "traps" and target != "ref":
        assert ", -np.inf)" in code


@pytest.mark.onednn
def test_onednn_primitives_are_made_at_load(tmp_path: Path) -> None:
    from nnlayout.kernels.onednn import primitives

    source = tmp_path / "program.mlir"
    source.write_text(TRAPS)
    module = generated(compile_file(source, "onednn"), source, tmp_path)
    made = primitives.cache_size()
    inputs = random_inputs(parse_module(make_context(), TRAPS, "traps"))
    first = module.run(*inputs)
    assert primitives.cache_size() == made  # nothing created per run
    assert_same(Interpreter(parse_module(make_context(), TRAPS, "traps")).run(inputs), first)


@pytest.mark.parametrize("runner", ["generated", "interpreter"])
def test_runs_from_several_threads_take_turns(runner: str, tmp_path: Path) -> None:
    """A planned program runs in one arena, and its kernels stay bound to their buffers
    between runs: runs from several threads (the kernels release the GIL) returned each
    other's results, or a mix, before they took turns."""
    source = tmp_path / "program.mlir"
    source.write_text(TRAPS)
    planned = compile_file(source, "onednn" if onednn_available() else "avx2")
    if runner == "generated":
        run = generated(planned, source, tmp_path).run
    else:
        shared = Interpreter(planned, source_path=str(source))
        run = lambda *xs: shared.run(list(xs))  # noqa: E731
    original = parse_module(make_context(), TRAPS, "traps")
    inputs = [[x * (1 + k) for x in random_inputs(original)] for k in range(6)]
    expected = [Interpreter(original).run(xs) for xs in inputs]

    def check(k: int) -> None:
        for _ in range(15):
            assert_same(expected[k], run(*inputs[k]))

    with ThreadPoolExecutor(len(inputs)) as pool:
        for future in [pool.submit(check, k) for k in range(len(inputs))]:
            future.result()


# A kernel reading what another wrote (a max pooling after a relu; a guarded convolution
# after a concat built in place from two convolutions' results), and a fill that oneDNN's
# fast path would get wrong: a window of only -inf, NaN through a relu.
TRUSTED_WRITERS = {
    "nn.max_pool2d": (
        "onednn",
        -np.inf,
        f"""
func.func @f(%x: tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> {{
  %w = nn.constant dense<{dense((8, 8, 3, 3), 1)}> : tensor<8x8x3x3xf32>
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %a = nn.relu %c : tensor<1x8x6x6xf32>
  %m = nn.max_pool2d %a kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x8x6x6xf32> -> tensor<1x8x6x6xf32>
  func.return %m : tensor<1x8x6x6xf32>
}}""",
    ),
    "nn.fused_conv2d": (
        "onednn-nchw8c",
        np.nan,
        f"""
func.func @f(%x: tensor<1x4x6x6xf32>) -> tensor<1x8x6x6xf32> {{
  %w1 = nn.constant dense<{dense((8, 4, 3, 3), 2)}> : tensor<8x4x3x3xf32>
  %a = nn.conv2d %x, %w1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  %w2 = nn.constant dense<{dense((8, 4, 3, 3), 3)}> : tensor<8x4x3x3xf32>
  %b = nn.conv2d %x, %w2 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  %cat = nn.concat %a, %b axis 1 : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x16x6x6xf32>
  %w3 = nn.constant dense<{dense((8, 16, 3, 3), 4)}> : tensor<8x16x3x3xf32>
  %c = nn.conv2d %cat, %w3 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x6x6xf32>, tensor<8x16x3x3xf32>) -> tensor<1x8x6x6xf32>
  %y = nn.relu %c : tensor<1x8x6x6xf32>
  func.return %y : tensor<1x8x6x6xf32>
}}""",
    ),
}


@pytest.mark.onednn
@pytest.mark.parametrize("reader", sorted(TRUSTED_WRITERS))
def test_a_kernel_called_on_other_arrays_trusts_no_bound_kept_for_the_arena(
    reader: str, tmp_path: Path
) -> None:
    """A oneDNN kernel takes the bound on its operand's norm that the kernels which wrote
    the operand's buffer kept (so that it need not check for NaN and Inf itself) only for
    the very bytes they wrote: called through K[i] on other arrays, it checks them."""
    target, fill, text = TRUSTED_WRITERS[reader]
    source = tmp_path / "program.mlir"
    source.write_text(text)
    module = generated(compile_file(source, target), source, tmp_path)
    code = (tmp_path / "model.py").read_text()
    index = next(
        i
        for i, op in enumerate(
            op for op in module.PROGRAM.function.body.block.ops if isinstance(op, ComputeOp)
        )
        if op.inner.name == reader
    )
    ins, outs = re.search(
        rf"^k{index} = PROGRAM\.on\({index}, \((.*)\), \((.*),\)\)$", code, re.MULTILINE
    ).groups()
    # Constants only bound kernels read are released at load: evaluated again here.
    constants = evaluate_constants(load_time_constants(module.PROGRAM.function)[1], dict)
    indices = dict(re.findall(r"^(\w+) = PROGRAM\.constants\[(\d+)\]", code, re.MULTILINE))
    operands = [
        constants[int(indices[name])] if name in indices else getattr(module, name)
        for name in ins.replace(",", " ").split()
    ]
    module.run(*random_inputs(parse_module(make_context(), text, "program")))  # finite
    other = np.full_like(operands[0], fill)
    out = np.empty_like(getattr(module, outs))
    module.K[index]((other, *operands[1:]), (out,))
    np.testing.assert_array_equal(out, np.full_like(out, fill))


def test_a_view_of_an_argument_is_taken_on_each_run(tmp_path: Path) -> None:
    """Bufferized IR may view a function argument (hand-written, or from a pass of the
    user's): the generated module takes that view of each call's array, not once at load
    (where the argument does not exist yet; found by mutation)."""
    source = tmp_path / "view.mlir"
    source.write_text("""
func.func @f(%x: memref<1x8x4x4xf32>) -> memref<1x4x4x4xf32> {
  %s = memref.subview %x[0, 0, 0, 0] [1, 4, 4, 4] [1, 1, 1, 1] : memref<1x8x4x4xf32> to memref<1x4x4x4xf32, strided<[128, 16, 4, 1]>>
  %o = memref.alloc() {alignment = 64 : i64} : memref<1x4x4x4xf32>
  nn.compute ins(%s : memref<1x4x4x4xf32, strided<[128, 16, 4, 1]>>) outs(%o : memref<1x4x4x4xf32>) {
  ^bb0(%a: tensor<1x4x4x4xf32>):
    %r = nn.neg %a : tensor<1x4x4x4xf32>
    nn.yield %r : tensor<1x4x4x4xf32>
  }
  func.return %o : memref<1x4x4x4xf32>
}
""")
    planned = parse_module(make_context(), source.read_text(), str(source))
    run_pipeline(parse_pipeline("plan-memory", get_all_passes()), make_context(), planned)
    module = generated(planned, source, tmp_path)
    rng = np.random.default_rng(0)
    for _ in range(2):
        x = rng.standard_normal((1, 8, 4, 4)).astype(np.float32)
        (out,) = module.run(x)
        np.testing.assert_array_equal(out, -x[:, :4])


def test_the_signature_is_read_once_and_every_run_still_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The entry's argument specs are worked out from the IR at the first run, not on each
    (they cost more than a small kernel call); each run's arrays are still checked: count,
    shape and dtype, with the one-line errors of the first."""
    from nnlayout.diagnostics import UserError
    from nnlayout.lowering import program

    source = tmp_path / "neg.mlir"
    source.write_text("""
func.func @f(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %r = nn.neg %x : tensor<1x8x4x4xf32>
  func.return %r : tensor<1x8x4x4xf32>
}
""")
    module = generated(compile_file(source, "ref"), source, tmp_path)
    calls = []
    real = program.argument_specs
    monkeypatch.setattr(program, "argument_specs", lambda f: calls.append(f) or real(f))
    x = np.ones((1, 8, 4, 4), np.float32)
    for _ in range(3):
        np.testing.assert_array_equal(module.run(x)[0], -x)
    assert len(calls) == 1
    for bad, message in (
        ((), "takes 1 input(s)"),
        ((x, x), "takes 1 input(s)"),
        ((x[:, :4],), "expected shape [1, 8, 4, 4] float32, got [1, 4, 4, 4] float32"),
        ((x.astype(np.float64),), "got [1, 8, 4, 4] float64"),
    ):
        with pytest.raises(UserError, match=re.escape(message)):
            module.run(*bad)
