"""The `blas` family (kernels/blas.py): a batch-1 classifier's fully connected layers in numpy's
BLAS on the targets with oneDNN, as torch's two exporters write them (Gemm with transB; MatMul
then Add), against onnxruntime on every target, padding on and off; NaN, infinities, alpha and
beta as the reference kernel computes them; and the products it leaves to oneDNN."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import helper

from nnlayout.dialects import nn
from nnlayout.frontends.onnx import import_to_files
from nnlayout.kernels import blas
from nnlayout.kernels.blas import MIN_WEIGHT_BYTES, PreparedProduct
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.targets import get_target
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    check_against_onnxruntime,
    chosen_kernels,
    compile_module,
    onnx_model,
    parse,
)

needs_onednn = pytest.mark.skipif(not b.available(), reason="oneDNN is not installed")


@pytest.fixture(autouse=True)
def measured_faster(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel runs only on CPUs where it was measured faster than oneDNN (blas.FASTER_ON):
    these tests check what it computes, so they take such a CPU whatever this one is."""
    monkeypatch.setattr(blas, "cpu_vendor", lambda: blas.FASTER_ON[0])


# K x N of the two layers: each takes at least MIN_WEIGHT_BYTES (1 MiB) of float32 weights.
K, HIDDEN, N = 640, 512, 520


def weights(rows: int, columns: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((rows, columns)) / np.sqrt(columns)).astype(np.float32)


def classifier(dynamo: bool, rows: int = 1, k: int = K) -> object:
    """x[rows, k] -> Linear -> HardSwish -> Linear, as the exporter writes it."""
    nodes, initializers, x = [], {}, "x"
    for i, (inner, outer) in enumerate(((k, HIDDEN), (HIDDEN, N))):
        w = weights(outer, inner, i)
        initializers[f"b{i}"] = (
            np.random.default_rng(9 + i).standard_normal(outer).astype(np.float32)
        )
        out = "y" if i == 1 else "h"
        if dynamo:
            initializers[f"w{i}"] = np.ascontiguousarray(w.T)
            nodes += [
                helper.make_node("MatMul", [x, f"w{i}"], [f"m{i}"]),
                helper.make_node("Add", [f"m{i}", f"b{i}"], [out]),
            ]
        else:
            initializers[f"w{i}"] = w
            nodes.append(helper.make_node("Gemm", [x, f"w{i}", f"b{i}"], [out], transB=1))
        if i == 0:
            nodes.append(helper.make_node("HardSwish", ["h"], ["a"]))
            x = "a"
    return onnx_model(nodes, {"x": [rows, k]}, ["y"], initializers)


@needs_onednn
@pytest.mark.parametrize("dynamo", [False, True])
def test_a_batch_1_classifier_runs_in_blas_as_onnxruntime_does(tmp_path: Path, dynamo: bool):
    """Both layers in numpy's BLAS on the oneDNN targets (not on the numpy ones), and the
    results onnxruntime's everywhere, padding on and off, interpreter and generated module."""
    assert 4 * K * HIDDEN >= MIN_WEIGHT_BYTES and 4 * HIDDEN * N >= MIN_WEIGHT_BYTES
    module = check_against_onnxruntime(classifier(dynamo), tmp_path)
    op, name = (nn.MatmulOp, "matmul") if dynamo else (nn.GemmOp, "gemm")
    for target in ("onednn", "host", "onednn-nchw16c"):
        assert chosen_kernels(compile_module(module, target, True), op) == {f"{name}_blas"}
    assert "blas" not in str(chosen_kernels(compile_module(module, "avx512", True), op))


@needs_onednn
@pytest.mark.parametrize(("rows", "k"), [(1, 64), (12, K)])
def test_small_weights_and_many_rows_stay_with_onednn(tmp_path: Path, rows: int, k: int):
    """Weights under MIN_WEIGHT_BYTES (cache-resident, not measured) and more than
    SMALL_BATCH_ROWS rows (a transformer's tokens) keep oneDNN's kernel."""
    path = tmp_path / "m.onnx"
    path.write_bytes(classifier(False, rows, k).SerializeToString())
    module = import_to_files(path)
    kernels = chosen_kernels(compile_module(module, "onednn", True), nn.GemmOp)
    assert kernels == ({"gemm_onednn"} if rows > 1 else {"gemm_onednn", "gemm_blas"})


@needs_onednn
@pytest.mark.parametrize(("alpha", "beta"), [(1.0, 1.0), (0.5, 0.0), (2.0, -1.5)])
def test_nan_infinities_alpha_and_beta_as_the_reference(tmp_path: Path, alpha: float, beta: float):
    """NaN and infinities in x and in C, and alpha and beta (C not added with beta 0, so an
    infinity in it does not turn the result into NaN): the reference's results."""
    w = weights(N, K, 0)
    c = np.random.default_rng(1).standard_normal(N).astype(np.float32)
    c[3], c[7] = np.inf, -np.inf
    node = helper.make_node("Gemm", ["x", "w", "c"], ["y"], transB=1, alpha=alpha, beta=beta)
    path = tmp_path / "m.onnx"
    path.write_bytes(onnx_model([node], {"x": [1, K]}, ["y"], {"w": w, "c": c}).SerializeToString())
    module = import_to_files(path)
    x = np.random.default_rng(2).standard_normal((1, K)).astype(np.float32)
    x[0, 5] = np.nan if beta == 0.0 else x[0, 5]
    x[0, 9] = np.inf
    (want,) = Interpreter(module, source_path=str(path.with_suffix(".mlir"))).run([x])
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    assert chosen_kernels(planned, nn.GemmOp) == {"gemm_blas"}
    (got,) = run_generated(planned, [x], source_path=str(path.with_suffix(".mlir")))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_transposed_weights_are_packed_once_per_array() -> None:
    """The K x N copy of a transB gemm's weights is made when first seen and kept for that
    array; another array (another program's weights) is packed again, not mistaken for it."""
    module = parse(
        """
func.func @f(%x: tensor<1x4xf32>, %w: tensor<3x4xf32>) -> tensor<1x3xf32> {
  %y = nn.gemm %x, %w trans_b alpha 1.0 beta 1.0 : (tensor<1x4xf32>, tensor<3x4xf32>) -> tensor<1x3xf32>
  func.return %y : tensor<1x3xf32>
}"""
    )
    (op,) = [op for op in module.walk() if isinstance(op, nn.GemmOp)]
    prepared = PreparedProduct(op)
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    w1, w2 = weights(3, 4, 0), weights(3, 4, 1)
    out = np.empty((1, 3), np.float32)
    prepared([x, w1], out)
    np.testing.assert_allclose(out, x @ w1.T, rtol=1e-6)
    call = prepared.on([x, w1], out)
    out[...] = 0
    call()
    np.testing.assert_allclose(out, x @ w1.T, rtol=1e-6)
    prepared([x, w2], out)
    np.testing.assert_allclose(out, x @ w2.T, rtol=1e-6)
    strided = np.zeros((1, 6), np.float32)[:, ::2]  # not C-contiguous: computed, then copied
    prepared([x, w2], strided)
    np.testing.assert_allclose(strided, x @ w2.T, rtol=1e-6)


@needs_onednn
@pytest.mark.parametrize("transposed", [True, False], ids=["gemm-transB", "matmul"])
def test_the_plan_counts_the_transposed_copy(transposed: bool) -> None:
    """The loaded program keeps a transB gemm's weights and the kernel's K x N copy (the
    gemm reads the function's argument: the weights are passed on every run):
    `nnlayout.constant_bytes` counts both; a matmul's weights once. (Where only kernels
    bound once read them, the plain weights are freed: tests/lowering/
    test_released_constants.py.)"""
    w = "tensor<520x640xf32>" if transposed else "tensor<640x520xf32>"
    op = "nn.gemm %x, %w trans_b alpha 1.0 beta 1.0" if transposed else "nn.matmul %x, %w"
    module = parse(
        f"""
func.func @f(%x: tensor<1x640xf32>) -> tensor<1x520xf32> {{
  %w = nn.constant dense<0.01> : {w}
  %y = {op} : (tensor<1x640xf32>, {w}) -> tensor<1x520xf32>
  func.return %y : tensor<1x520xf32>
}}"""
    )
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    assert chosen_kernels(planned, nn.GemmOp if transposed else nn.MatmulOp) <= {
        "gemm_blas",
        "matmul_blas",
    }
    interpreter = Interpreter(planned)
    interpreter.run([np.ones((1, 640), np.float32)])
    held = sum(a.nbytes for a in interpreter._constants.values())
    held += sum(
        bound.prepared._seen[1].nbytes
        for bound in interpreter._bound.values()
        if isinstance(getattr(bound, "prepared", None), PreparedProduct)
        and bound.prepared._seen[1] is not bound.prepared._seen[0]()
    )
    assert held == 640 * 520 * 4 * (2 if transposed else 1)
    function = next(op for op in planned.walk() if op.name == "func.func")
    assert function.attributes["nnlayout.constant_bytes"].value.data == held  # type: ignore[attr-defined]


@needs_onednn
@pytest.mark.parametrize("dynamo", [False, True])
def test_other_cpus_leave_the_classifier_to_onednn(
    tmp_path: Path, dynamo: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a CPU where numpy's BLAS was measured slower (an AMD EPYC), the kernel refuses,
    saying why, and oneDNN runs both layers with their bias and activation fused, with
    onnxruntime's results."""
    monkeypatch.setattr(blas, "cpu_vendor", lambda: "AuthenticAMD")
    module = check_against_onnxruntime(classifier(dynamo), tmp_path)
    op = nn.MatmulOp if dynamo else nn.GemmOp
    compiled = compile_module(module, "onednn", True)
    kernels = {k for t in (op, nn.FusedMatmulOp) for k in chosen_kernels(compiled, t)}
    assert kernels and all(name.endswith("_onednn") for name in kernels), kernels
    first = next(o for o in module.walk() if isinstance(o, op))
    reason = blas.accepts(first, get_target("onednn"), True)
    assert reason is not None and "AuthenticAMD" in reason
