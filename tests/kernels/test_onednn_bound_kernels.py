"""oneDNN kernels once bound, from run to run: a second run creates no primitive, weights are
repacked where the thread count changes oneDNN's format, a prepared kernel follows its
buffers from call to call and one bound to its buffers (`Prepared.on`) stays on them
between other calls, two interpreters of one program run in two threads, and a primitive
lives as long as a call that runs it."""

from __future__ import annotations

import ctypes
import gc
import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from nnlayout.dialects import nn
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import calls
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.convolution import conv_geometry, conv_pd
from nnlayout.kernels.onednn.kernels import forget_choices
from nnlayout.kernels.onednn.prepared import Prepared, compiled_for
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.lowering.to_numpy import import_generated, translate
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    assert_same,
    compile_module,
    dense,
    parse,
    random_inputs,
)
from nnlayout.tests.kernels.test_onednn_kernels import conv_program, conv_tags

pytestmark = pytest.mark.onednn


@contextmanager
def openmp_threads(count: int) -> Iterator[None]:
    """oneDNN's thread count (OpenMP's, which it reads when it creates a primitive) set to
    `count` in this thread, restored afterwards."""
    openmp = ctypes.CDLL("libgomp.so.1")  # the one libdnnl loaded
    before = openmp.omp_get_max_threads()
    openmp.omp_set_num_threads(count)
    try:
        yield
    finally:
        openmp.omp_set_num_threads(before)


@pytest.mark.slow
@pytest.mark.parametrize(("compiled_at", "run_at"), [(2, 1), (1, 2)])
def test_weights_are_repacked_where_the_thread_count_changes_onednns_format(
    compiled_at: int, run_at: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A brgconv blocks its weights by 16 output channels at one thread count and by 24 at
    the other (this 3x3 128->128 convolution at 28x28, as in ResNet-50): a program compiled
    at one count and loaded at the other got ref:any for the weights its types record (1000
    times slower). oneDNN now chooses the weights' format again at load, and the kernel
    repacks them, once per program (they are a load-time constant)."""
    repacks = []
    repacker = calls.weights_repacker

    def counted(op: nn.Conv2dOp, compiled: object) -> object:
        repack = repacker(op, compiled)  # type: ignore[arg-type]
        return None if repack is None else lambda w: repacks.append(1) or repack(w)

    monkeypatch.setattr(calls, "weights_repacker", counted)
    module = parse(
        conv_program(128, 128, 28, 3, "[1, 1]", "[1, 1, 1, 1]", "[1, 1]", 1, 28, batch=1)
    )
    inputs = random_inputs(module)
    expected = Interpreter(module).run(inputs)
    with openmp_threads(compiled_at):
        planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    forget_choices()  # as in a new process
    (op,) = [op for op in planned.walk() if op.name == "nn.conv2d"]
    geometry = conv_geometry(op)
    tags = conv_tags(op, geometry)
    try:
        with openmp_threads(run_at):
            recorded = conv_pd(geometry, *tags).implementation
            if not recorded.startswith("ref"):
                pytest.skip(f"oneDNN keeps this format at {run_at} thread(s) here: {recorded}")
            assert not compiled_for(op)[0].pd.implementation.startswith("ref")
            interpreter = Interpreter(planned)
            for _ in range(3):
                assert_same(expected, interpreter.run(inputs))
            generated = import_generated(translate(planned, tmp_path / "model.py").code)
            for _ in range(3):
                assert_same(expected, generated.run(*inputs))
            assert len(repacks) == 2  # one per program
    finally:
        forget_choices()


def test_two_interpreters_of_one_program_run_in_two_threads() -> None:
    """Each calls the oneDNN kernels on arrays of its own: their primitives' memory objects,
    re-pointed on every call, were shared, so one thread ran on the other's arrays."""
    module = parse(
        conv_program(
            16,
            16,
            24,
            3,
            "[1, 1]",
            "[1, 1, 1, 1]",
            "[1, 1]",
            1,
            24,
            then="%r = nn.relu %c : tensor<2x16x24x24xf32>\n  func.return %r",
        )
    )
    compiled = compile_module(module, "onednn", padding=True)
    inputs = [[x * (k + 1) for x in random_inputs(module)] for k in range(2)]
    expected = [Interpreter(module).run(xs) for xs in inputs]

    def check(k: int) -> None:
        interpreter = Interpreter(compiled)
        for _ in range(20):
            assert_same(expected[k], interpreter.run(inputs[k]))

    with ThreadPoolExecutor(2) as pool:
        for future in [pool.submit(check, k) for k in range(2)]:
            future.result()


def nchw_to_nhwc() -> p.Compiled:
    """A reorder of a 1x16x4x4 tensor from NCHW to NHWC, its primitive not yet created."""
    given, wanted = (b.MemoryDesc.with_tag((1, 16, 4, 4), tag) for tag in (5, 22))
    return p.Compiled(p.reorder_pd(given, wanted), (b.DNNL_ARG_SRC, b.DNNL_ARG_DST), eager=False)


def test_a_bound_call_keeps_its_primitive(monkeypatch: pytest.MonkeyPatch) -> None:
    """The call `Primitive.bound` makes runs the primitive's handle after the `Primitive`
    is gone (a lazy primitive created twice by two threads drops one): the handle is
    destroyed with the call, not before it."""
    library, destroyed = b.lib(), []
    destroy = library.dnnl_primitive_destroy
    monkeypatch.setattr(
        library, "dnnl_primitive_destroy", lambda h: destroyed.append(h) or destroy(h)
    )
    compiled = nchw_to_nhwc()
    source = np.arange(256, dtype=np.float32)
    out = np.zeros(256, np.float32)
    compiled.point({b.DNNL_ARG_SRC: source, b.DNNL_ARG_DST: out})
    primitive = b.Primitive(compiled.pd)
    ours = primitive.handle.value  # others (earlier tests' garbage) may go meanwhile
    run = primitive.bound(compiled._exec_args)
    del primitive
    gc.collect()
    assert ours not in [h.value for h in destroyed]
    run()
    np.testing.assert_array_equal(out, source.reshape(1, 16, 4, 4).transpose(0, 2, 3, 1).ravel())
    del run
    gc.collect()
    assert ours in [h.value for h in destroyed]


def test_two_threads_create_a_lazy_primitive_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two interpreters preparing one program at once ask for the same deferred primitive:
    it is created once, and both get it."""
    made = []

    class Slow(b.Primitive):
        def __init__(self, pd: b.PrimitiveDesc) -> None:
            time.sleep(0.05)  # as a JIT compilation, with the interpreter lock released
            super().__init__(pd)
            made.append(self)

    monkeypatch.setattr(b, "Primitive", Slow)
    compiled, start = nchw_to_nhwc(), threading.Barrier(2)

    def get() -> b.Primitive:
        start.wait()
        return compiled.primitive

    with ThreadPoolExecutor(2) as pool:
        first, second = pool.map(lambda _: get(), range(2))
    assert len(made) == 1
    assert first is second is made[0]


def test_a_second_run_creates_no_primitive() -> None:
    from nnlayout.kernels.onednn.primitives import cache_size

    module = parse(conv_program(8, 16, 9, 3, "[1, 1]", "[1, 1, 1, 1]", "[1, 1]", 1, 9))
    compiled = compile_module(module, "onednn", padding=True)
    inputs = random_inputs(module)
    first = Interpreter(compiled).run(inputs)
    size = cache_size()
    np.testing.assert_array_equal(Interpreter(compiled).run(inputs)[0], first[0])
    assert cache_size() == size


def fused_residual_conv(activation: str = "") -> tuple[nn.FusedConv2dOp, np.ndarray, np.ndarray]:
    """A convolution fused with its residual add (and `activation`, e.g. "nn.relu") for
    oneDNN, with its weights and bias."""
    t = "tensor<1x8x6x6xf32>"
    result = "%y" if activation else "%s"
    module = parse(f"""
func.func @f(%x: {t}, %r: {t}) -> {t} {{
  %w = nn.constant dense<{dense((8, 8, 3, 3), 3)}> : tensor<8x8x3x3xf32>
  %b = nn.constant dense<{dense((8,), 4)}> : tensor<8xf32>
  %c = nn.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : ({t}, tensor<8x8x3x3xf32>, tensor<8xf32>) -> {t}
  %s = nn.add %c, %r : ({t}, {t}) -> {t}
  {f"%y = {activation} %s : {t}" if activation else ""}
  func.return {result} : {t}
}}""")
    fused = compile_module(
        module,
        "onednn",
        True,
        "select-dispatch{{target={target}}},fuse-post-ops{{target={target}}}",
    )
    [op] = [op for op in fused.walk() if isinstance(op, nn.FusedConv2dOp)]
    weights, bias = (
        np.asarray(json.loads(dense(shape, seed)), np.float32)
        for shape, seed in (((8, 8, 3, 3), 3), ((8,), 4))
    )
    return op, weights, bias


def test_a_prepared_kernel_follows_its_buffers_from_call_to_call() -> None:
    """A prepared kernel given other buffers from call to call, the addend in place one call
    and not the next, and new contents in the same buffers, computes each call's result."""
    op, weights, bias = fused_residual_conv()
    bound = Prepared(op, None)
    rng = np.random.default_rng(5)
    x, r, other = (rng.standard_normal((1, 8, 6, 6)).astype(np.float32) for _ in range(3))
    out = np.empty_like(x)
    for step in range(6):
        in_place = step in (2, 3)
        addend = other if in_place else r
        expected = REFERENCE_KERNELS[nn.FusedConv2dOp](op, [x, weights, bias, addend])
        bound([x, weights, bias, addend], addend if in_place else out)
        np.testing.assert_allclose(addend if in_place else out, expected, rtol=1e-5, atol=1e-5)
        x[0, step, 2, 2] += 1.0  # new contents in the same buffer
        if step == 4:
            x = x.copy()  # another buffer
        other[...] = rng.standard_normal(other.shape)


def test_a_kernel_bound_to_its_buffers_runs_on_them_between_other_calls() -> None:
    """`Prepared.on` binds a kernel to the arrays it will always be given; calls of the same
    kernel on other arrays in between (in place or not) do not leave it pointing elsewhere,
    and new contents of its arrays are read on every call."""
    op, weights, bias = fused_residual_conv("nn.relu")
    prepared = Prepared(op, None)
    rng = np.random.default_rng(6)
    x, r, x2, r2 = (rng.standard_normal((1, 8, 6, 6)).astype(np.float32) for _ in range(4))
    out, in_place = np.empty_like(x), r2  # the second binding accumulates into its addend
    fixed = prepared.on([x, weights, bias, r], out)
    fixed_in_place = prepared.on([x2, weights, bias, r2], in_place)
    strided = np.empty((1, 8, 6, 12), np.float32)[..., ::2]  # not oneDNN's: copied into
    fixed_strided = prepared.on([x, weights, bias, r], strided)

    def expect(source: np.ndarray, addend: np.ndarray) -> np.ndarray:
        return REFERENCE_KERNELS[nn.FusedConv2dOp](op, [source, weights, bias, addend])

    for step in range(4):
        x[0, step, 1, 1] = np.nan if step == 2 else x[0, step, 1, 1] + 1.0
        r[0, step, 3, 3] += 2.0
        wanted = expect(x, r)
        fixed()
        np.testing.assert_allclose(out, wanted, rtol=1e-5, atol=1e-5)
        other_out = np.empty_like(x)
        prepared([x2, weights, bias, r], other_out)  # other arrays, by the same kernel
        np.testing.assert_allclose(other_out, expect(x2, r), rtol=1e-5, atol=1e-5)
        r2[...] = rng.standard_normal(r2.shape)
        wanted_in_place = expect(x2, r2)
        fixed_in_place()
        np.testing.assert_allclose(in_place, wanted_in_place, rtol=1e-5, atol=1e-5)
        fixed_strided()
        np.testing.assert_allclose(strided, wanted, rtol=1e-5, atol=1e-5)
        fixed()
        np.testing.assert_allclose(out, wanted, rtol=1e-5, atol=1e-5)
        out.fill(7.0)
        prepared([x, weights, bias, r], out)  # the bound arrays, passed again
        np.testing.assert_allclose(out, wanted, rtol=1e-5, atol=1e-5)
