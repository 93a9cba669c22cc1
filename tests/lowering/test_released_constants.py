"""A loaded generated module holds each constant once (lowering/program.py): the plain arrays
that only kernels bound at load read, and that those kernels pack or copy (oneDNN's int8
weights and their prescaled bias, the BLAS kernel's K x N copy of transposed weights), are
freed; those something still reads (a kernel run on every run, a kernel reading them as
given) stay. plan-memory's figures count what stays (transforms/constant_bytes.py); results
are unchanged on every target, interpreter and generated module."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType, SimpleNamespace

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from nnlayout.diagnostics import UserError
from nnlayout.dialects import nn
from nnlayout.dialects.plan import (
    CONSTANT_BYTES,
    PACKED_BYTES,
    PACKED_PLAIN_BYTES,
    RELEASED_BYTES,
)
from nnlayout.kernels import blas
from nnlayout.kernels.onednn.binding import runs_vnni
from nnlayout.lowering import program
from nnlayout.lowering.to_numpy import generated_module
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.transforms.memory_plan import ConstantBytes
from nnlayout.transforms.memory_report import constants_held
from tests.helpers import DEFAULT_PIPELINE, chosen_kernels, compile_module, everywhere, parse
from tests.transforms.test_int8_packing import qconv

WEIGHTS = 1000 * 512 * 4
# x (read on every run: the gemm reads the argument), or relu(x) (an arena buffer: bound once).
GEMM = """
func.func @f(%x: tensor<1x512xf32>) -> tensor<1x1000xf32> {{
  %w = nn.constant dense<0.5> : tensor<1000x512xf32>
  %c = nn.constant dense<0.25> : tensor<1x1000xf32>
  {relu}
  %y = nn.gemm {source}, %w, %c trans_b alpha 1.0 beta 1.0 : (tensor<1x512xf32>, tensor<1000x512xf32>, tensor<1x1000xf32>) -> tensor<1x1000xf32>
  func.return %y : tensor<1x1000xf32>
}}
"""
RELU = "%r = nn.relu %x : tensor<1x512xf32>"


def _gemm(bound_once: bool) -> ModuleOp:
    relu, source = (RELU, "%r") if bound_once else ("", "%x")
    return parse(GEMM.format(relu=relu, source=source))


@contextmanager
def _loaded(
    compiled: ModuleOp, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[ModuleType, list[weakref.ref[np.ndarray]]]]:
    """`compiled`'s generated module, loaded, and weak references to the constants its
    Program evaluated (in order)."""
    made: list[weakref.ref[np.ndarray]] = []
    evaluate = program.evaluate_constants

    def recording(*args: object) -> list[object]:
        values = evaluate(*args)  # type: ignore[arg-type]
        made.extend(weakref.ref(v) for v in values)  # type: ignore[arg-type]
        return values

    monkeypatch.setattr(program, "evaluate_constants", recording)
    with generated_module(compiled) as generated:
        gc.collect()
        yield generated, made


def _figures(compiled: ModuleOp) -> dict[str, int]:
    function = next(op for op in compiled.walk() if isinstance(op, func.FuncOp))
    return {k: v.value.data for k, v in function.attributes.items() if hasattr(v, "value")}  # type: ignore[attr-defined]


def _held(made: list[weakref.ref[np.ndarray]]) -> int:
    """The bytes of the constants' plain arrays still alive."""
    return sum(array.nbytes for ref in made if (array := ref()) is not None)


def _check_runs(compiled: ModuleOp, generated: ModuleType, inputs: list[np.ndarray]) -> None:
    """The generated module gives the interpreter's results, run after run."""
    want = Interpreter(compiled).run(inputs)
    for _ in range(2):
        for expected, actual in zip(want, generated.run(*inputs), strict=True):
            np.testing.assert_array_equal(actual, expected)


@pytest.mark.skipif(not runs_vnni(), reason="oneDNN has no VNNI/AMX int8 code here")
@pytest.mark.parametrize("add", [False, True], ids=["qconv2d", "qadd-after"])
def test_int8_weights_held_packed_alone(add: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The packed weights' plain array and the bias (prescaled into the kernel's f32 copy)
    are freed once the convolution is bound: no plain constant array stays alive, the Program
    holds none, and plan-memory counts the packed copy and the bias's copy alone."""
    module = compile_module(parse(qconv("ui8", 10, 1, add=add)), "host", True, DEFAULT_PIPELINE)
    kernels = chosen_kernels(module, nn.QConv2dOp) | chosen_kernels(module, nn.QConv2dAddOp)
    assert kernels in ({"qconv2d_onednn"}, {"qconv2d_add_onednn"})
    inputs = [np.random.default_rng(1).integers(0, 256, (1, 16, 6, 6)).astype(np.uint8)]
    with _loaded(module, monkeypatch) as (generated, made):
        assert len(made) == 2 and _held(made) == 0  # weights and bias freed
        with pytest.raises(UserError, match="was released once the generated module"):
            generated.PROGRAM.constants[0]
        _check_runs(module, generated, inputs)
    figures = _figures(module)
    plain, bias = 32 * 16 * 9, 4 * 32
    assert figures[PACKED_PLAIN_BYTES] == 0 and figures[RELEASED_BYTES] == plain + bias
    assert figures[CONSTANT_BYTES] == figures[PACKED_BYTES] + bias


@pytest.mark.parametrize("bound_once", [True, False], ids=["bound-once", "per-run"])
def test_blas_copy_replaces_the_plain_weights(
    bound_once: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A transposed Gemm on the BLAS kernel keeps its K x N copy: bound once (it reads an
    arena buffer), the plain weights are freed and its bias, read as given, stays; read on
    every run (it reads the function's argument), both stay, passed on each call."""
    monkeypatch.setattr(blas, "cpu_vendor", lambda: blas.FASTER_ON[0])  # where it runs
    module = compile_module(_gemm(bound_once), "onednn", True, DEFAULT_PIPELINE)
    if chosen_kernels(module, nn.GemmOp) != {"gemm_blas"}:
        pytest.skip("the gemm is not on the BLAS kernel here")
    inputs = [np.random.default_rng(2).standard_normal((1, 512)).astype(np.float32)]
    bias = 1000 * 4
    plain = bias if bound_once else WEIGHTS + bias  # the plain arrays still read
    with _loaded(module, monkeypatch) as (generated, made):
        assert _held(made) == plain
        _check_runs(module, generated, inputs)
    figures = _figures(module)
    assert figures[RELEASED_BYTES] == (WEIGHTS if bound_once else 0)
    assert figures[CONSTANT_BYTES] == WEIGHTS + plain  # the K x N copy and those


# The weights a reshape of a constant that an add reads on every run: the reshape is a
# view of the constant when the reference kernel evaluates it at load.
VIEWED = """
func.func @f(%x: tensor<1x512xf32>, %z: tensor<512000xf32>) -> (tensor<1x1000xf32>, tensor<512000xf32>) {
  %w0 = nn.constant dense<0.5> : tensor<512000xf32>
  %w = nn.reshape %w0 : tensor<512000xf32> -> tensor<1000x512xf32>
  %c = nn.constant dense<0.25> : tensor<1x1000xf32>
  %r = nn.relu %x : tensor<1x512xf32>
  %y = nn.gemm %r, %w, %c trans_b alpha 1.0 beta 1.0 : (tensor<1x512xf32>, tensor<1000x512xf32>, tensor<1x1000xf32>) -> tensor<1x1000xf32>
  %s = nn.add %z, %w0 : (tensor<512000xf32>, tensor<512000xf32>) -> tensor<512000xf32>
  func.return %y, %s : tensor<1x1000xf32>, tensor<512000xf32>
}
"""


def test_a_released_view_frees_its_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The BLAS gemm (bound once) copies the reshaped weights, whose plain array is freed
    (released_bytes); the constant they reshape stays (the add reads it on every run). The
    loaded program's constants share no memory, so that freeing frees what released_bytes
    counts (a view of the held constant freed nothing)."""
    monkeypatch.setattr(blas, "cpu_vendor", lambda: blas.FASTER_ON[0])  # where it runs
    module = compile_module(parse(VIEWED), "onednn", True, DEFAULT_PIPELINE)
    if chosen_kernels(module, nn.GemmOp) != {"gemm_blas"}:
        pytest.skip("the gemm is not on the BLAS kernel here")
    evaluated: list[list[np.ndarray]] = []
    evaluate = program.evaluate_constants

    def recording(*args: object) -> list[object]:
        values = evaluate(*args)  # type: ignore[arg-type]
        evaluated.append(values)  # type: ignore[arg-type]
        return values

    monkeypatch.setattr(program, "evaluate_constants", recording)
    rng = np.random.default_rng(4)
    inputs = [
        rng.standard_normal((1, 512)).astype(np.float32),
        rng.standard_normal(512000).astype(np.float32),
    ]
    with generated_module(module) as generated:
        ((held, released, bias),) = evaluated
        assert released.shape == (1000, 512) and held.shape == (512000,)
        assert not np.shares_memory(released, held)
        _check_runs(module, generated, inputs)
    figures = _figures(module)
    assert figures[RELEASED_BYTES] == WEIGHTS
    assert figures[CONSTANT_BYTES] == WEIGHTS + WEIGHTS + bias.nbytes  # w0, the copy, c


@pytest.mark.parametrize("bound_once", [True, False], ids=["bound-once", "per-run"])
def test_results_unchanged_everywhere(bound_once: bool) -> None:
    """On every target, padding on and off: the generated module (which frees what only
    its bound kernels read) gives the interpreter's results."""
    inputs = [np.random.default_rng(3).standard_normal((1, 512)).astype(np.float32)]
    results: dict[tuple[str, bool], list[tuple[np.ndarray, ...]]] = {}
    for target, padding, _, got in everywhere(_gemm(bound_once), inputs):
        results.setdefault((target, padding), []).append(got)
    for key, (interpreted, generated) in results.items():
        np.testing.assert_array_equal(generated[0], interpreted[0], err_msg=str(key))


def test_the_report_says_what_is_held() -> None:
    """plan-memory's report line: packed copies, plain arrays of packed constants still read
    (only where some are), and the plain arrays freed at load."""
    freed = ConstantBytes(5120, 1, 4992, 0, 384, 4736)
    kept = ConstantBytes(9856, 1, 4992, 4608, 384, 0)
    plain = ConstantBytes(4736, 0, 0, 0, 0, 0)
    said = [constants_held(SimpleNamespace(constants=c)) for c in (freed, kept, plain)]  # type: ignore[arg-type]
    assert said == [
        "outside the arena; 1 packed by their kernels: 4.9 KiB, compensation 0.4 KiB; "
        "plain arrays freed at load: 4.6 KiB",
        "outside the arena; 1 packed by their kernels: 4.9 KiB, compensation 0.4 KiB, "
        "held plain too (read on every run): 4.5 KiB",
        "outside the arena",
    ]
