"""The CSR kernels against the reference kernels on the same (densified) values, and every
`accepts` reason: not CSR, not f32, not 2-D, too small, too dense."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
import scipy.sparse
from xdsl.dialects.builtin import NoneAttr, TensorType, f32, f64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.dialects.layout import StorageAttr
from nnlayout.kernels import sparse
from nnlayout.kernels.providers import registry
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.registry import Kernel
from nnlayout.kernels.targets import TARGETS

KERNELS: dict[str, Kernel] = {k.name: k for k in sparse.kernels()}
AVX2 = TARGETS["avx2"]


def csr_type(shape: Sequence[int], element_type: Attribute = f32) -> TensorType:
    return TensorType(element_type, shape, StorageAttr("csr"))


def plain(shape: Sequence[int]) -> SSAValue:
    return create_ssa_value(TensorType(f32, shape, NoneAttr()))


def sparse_matrix(rng: np.random.Generator, rows: int, cols: int, density: float) -> np.ndarray:
    values = rng.standard_normal((rows, cols)).astype(np.float32)
    return np.where(rng.random((rows, cols)) < density, values, np.float32(0))


def run(name: str, op: Operation, arrays: Sequence[np.ndarray]) -> None:
    """Runs kernel `name` with operand 0 as a csr_array and compares with the reference."""
    op.verify()
    kernel = KERNELS[name]
    assert kernel.operand_and_result_layouts(op, AVX2) == (
        ("csr",) + ("",) * (len(arrays) - 1),
        ("",),
    )
    inputs = [scipy.sparse.csr_array(arrays[0]), *arrays[1:]]
    out = kernel.impl(op, inputs)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    np.testing.assert_allclose(out, REFERENCE_KERNELS[type(op)](op, arrays), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("with_c", [False, True])
def test_gemm_csr(trans_a: bool, trans_b: bool, with_c: bool) -> None:
    rng = np.random.default_rng(int(trans_a) + 2 * int(trans_b) + 4 * int(with_c))
    m, k, n = 40, 48, 24
    a = sparse_matrix(rng, *((k, m) if trans_a else (m, k)), density=0.1)
    b = rng.standard_normal((n, k) if trans_b else (k, n)).astype(np.float32)
    arrays = [a, b] + ([rng.standard_normal((1, n)).astype(np.float32)] if with_c else [])
    op = nn.GemmOp(
        create_ssa_value(csr_type(a.shape)),
        plain(b.shape),
        plain((1, n)) if with_c else None,
        trans_a=trans_a,
        trans_b=trans_b,
        alpha=0.5,
        beta=2.0,
    )
    assert KERNELS["gemm_csr"].accepts(op, AVX2, True) is None
    run("gemm_csr", op, arrays)


@pytest.mark.parametrize("name", ["gemm_csr", "matmul_csr"])
@pytest.mark.parametrize("poison", [np.nan, np.inf])
def test_a_non_finite_dense_operand_meets_the_implicit_zeros(name: str, poison: float) -> None:
    """The reference multiplies b by every zero of a: 0 * NaN and 0 * inf are NaN. scipy's
    CSR product skips the implicit zeros, and gave finite numbers there."""
    rng = np.random.default_rng(5)
    a = sparse_matrix(rng, 40, 48, density=0.1)
    b = rng.standard_normal((48, 24)).astype(np.float32)
    b[3, 5] = poison
    op = (
        nn.GemmOp(create_ssa_value(csr_type(a.shape)), plain(b.shape), None)
        if name == "gemm_csr"
        else nn.MatmulOp(create_ssa_value(csr_type(a.shape)), plain(b.shape))
    )
    with np.errstate(all="ignore"):  # IEEE results, as the runtime computes them
        expected = REFERENCE_KERNELS[type(op)](op, [a, b])
        out = KERNELS[name].impl(op, [scipy.sparse.csr_array(a), b])
    assert np.isnan(expected[:, 5]).any()  # where a row of a has 0 at column 3
    np.testing.assert_array_equal(out, expected)


def test_gemm_csr_with_beta_zero_does_not_add_c() -> None:
    """As the reference kernel (and onnxruntime): an inf in C gave NaN through 0 * C."""
    rng = np.random.default_rng(0)
    a = sparse_matrix(rng, 40, 48, density=0.1)
    b = rng.standard_normal((48, 24)).astype(np.float32)
    c = np.full((1, 24), np.inf, np.float32)
    op = nn.GemmOp(create_ssa_value(csr_type(a.shape)), plain(b.shape), plain(c.shape), beta=0.0)
    out = KERNELS["gemm_csr"].impl(op, [scipy.sparse.csr_array(a), b, c])
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


def test_matmul_csr() -> None:
    rng = np.random.default_rng(7)
    a = sparse_matrix(rng, 64, 32, density=0.05)
    b = rng.standard_normal((32, 10)).astype(np.float32)
    op = nn.MatmulOp(create_ssa_value(csr_type(a.shape)), plain(b.shape))
    assert KERNELS["matmul_csr"].accepts(op, AVX2, True) is None
    run("matmul_csr", op, [a, b])


def constant(array: np.ndarray) -> nn.ConstantOp:
    """An inline constant of `array` whose type is declared CSR."""
    dense = nn.ConstantOp.from_array(array)
    return nn.ConstantOp(csr_type(array.shape), value=dense.value)


def test_sparse_constant_is_selected() -> None:
    """A sparse enough inline constant: select-dispatch's first family (sparse) wins."""
    weights = constant(sparse_matrix(np.random.default_rng(0), 64, 64, density=0.1))
    op = nn.MatmulOp(weights.output, plain((64, 8)))
    selection = registry().select(op, AVX2, True)
    assert selection is not None and selection.kernel.name == "matmul_csr"
    run("matmul_csr", op, [weights.inline_array(), np.ones((64, 8), np.float32)])


DENSE = np.ones((32, 32), np.float32)
DENSE.reshape(-1)[::8] = 0  # density 0.875


def csr_value(shape: Sequence[int], element_type: Attribute = f32) -> SSAValue:
    return create_ssa_value(csr_type(shape, element_type))


@pytest.mark.parametrize(
    ("make_a", "b_type", "reason"),
    [
        (lambda: csr_value((64, 64), f64), TensorType(f64, (64, 4)), "element type f64, not f32"),
        (
            lambda: csr_value((8, 8)),
            TensorType(f32, (8, 4)),
            "64 elements < 1024: too small for sparse",
        ),
        (
            lambda: constant(DENSE).output,
            TensorType(f32, (32, 4)),
            "density 0.88 > 0.25: dense GEMM is faster",
        ),
        (lambda: csr_value((64, 64)), TensorType(f32, (64, 4)), None),
    ],
    ids=["f64", "too-small", "too-dense", "unknown-density"],
)
@pytest.mark.parametrize(("name", "build"), [("gemm_csr", nn.GemmOp), ("matmul_csr", nn.MatmulOp)])
def test_refusals(
    name: str,
    build: Callable[[SSAValue, SSAValue], Operation],
    make_a: Callable[[], SSAValue],
    b_type: TensorType,
    reason: str | None,
) -> None:
    """An argument of unknown density is accepted once declared CSR and large enough."""
    op = build(make_a(), create_ssa_value(b_type))
    assert KERNELS[name].accepts(op, AVX2, True) == reason


@pytest.mark.parametrize(("name", "build"), [("gemm_csr", nn.GemmOp), ("matmul_csr", nn.MatmulOp)])
def test_applies_only_to_declared_csr(
    name: str, build: Callable[[SSAValue, SSAValue], Operation]
) -> None:
    dense = build(plain((64, 64)), create_ssa_value(TensorType(f32, (64, 4))))
    sparse = build(csr_value((64, 64)), create_ssa_value(TensorType(f32, (64, 4))))
    assert not KERNELS[name].applies(dense)
    assert KERNELS[name].applies(sparse)


def test_matmul_needs_2d() -> None:
    op = nn.MatmulOp(create_ssa_value(csr_type((64, 64))), plain((2, 64, 4)))
    assert KERNELS["matmul_csr"].accepts(op, AVX2, True) == (
        "operands of shapes [64, 64], [2, 64, 4] are not all 2-D"
    )


def test_an_elementwise_op_on_a_csr_value_compiles_and_runs() -> None:
    """Hand-written IR applying relu and add to CSR values: dispatch gave them relu_any and
    add_any ("any layout"), whose result stayed CSR, and bufferize failed with "CSR tensors
    have no dense buffer", no location. Element-wise kernels take dense data only."""
    from nnlayout.lowering.to_numpy import run_generated
    from nnlayout.runtime.interpreter import Interpreter
    from nnlayout.tests.helpers import (
        DEFAULT_PIPELINE,
        assert_same,
        compile_module,
        parse,
        random_inputs,
    )

    module = parse("""
func.func @f(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %t = layout.reorder %x : tensor<4x64xf32> -> tensor<4x64xf32, #layout.storage<"csr">>
  %r = nn.relu %t : tensor<4x64xf32, #layout.storage<"csr">>
  %s = nn.add %r, %t : (tensor<4x64xf32, #layout.storage<"csr">>, tensor<4x64xf32, #layout.storage<"csr">>) -> tensor<4x64xf32, #layout.storage<"csr">>
  %v = layout.reorder %s : tensor<4x64xf32, #layout.storage<"csr">> -> tensor<4x64xf32>
  func.return %v : tensor<4x64xf32>
}""")
    inputs = random_inputs(module)
    expected = Interpreter(module).run(inputs)
    for target in ("avx2", "avx512", "host"):
        compiled = compile_module(module, target, True, DEFAULT_PIPELINE)
        assert_same(expected, Interpreter(compiled).run(inputs))
        assert_same(expected, run_generated(compiled, inputs))
