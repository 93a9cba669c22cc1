"""oneDNN's matrix products: batched, broadcasting nn.matmul as its matmul primitive, and
fully connected products (a 2-D constant right operand) as its inner product on weights in
the format it chose, which our layout notation must name byte for byte."""

from __future__ import annotations

import numpy as np
import pytest

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import LayoutSpec, encoding_name
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.matmul import (
    fc_as_matmul,
    fc_given_weights,
    fc_pd,
    fc_weights_layout,
    is_fully_connected,
    matmul_dims,
)
from nnlayout.kernels.onednn.prepared import compiled_for
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    assert_same,
    compile_module,
    dense,
    parse,
    random_inputs,
)

pytestmark = pytest.mark.skipif(not b.available(), reason="oneDNN is not installed")


def tensor(shape: tuple[int, ...]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def matmul_program(lhs: tuple[int, ...], rhs: tuple[int, ...], out: tuple[int, ...]) -> str:
    return f"""
func.func @f(%a: {tensor(lhs)}, %b: {tensor(rhs)}) -> {tensor(out)} {{
  %y = nn.matmul %a, %b : ({tensor(lhs)}, {tensor(rhs)}) -> {tensor(out)}
  func.return %y : {tensor(out)}
}}"""


def only(module: object, name: str) -> nn.MatmulOp | nn.GemmOp:
    (op,) = [op for op in module.walk() if op.name == name]  # type: ignore[attr-defined]
    return op


@pytest.mark.parametrize(
    ("lhs", "rhs", "out"),
    [
        ((2, 3, 5, 4), (2, 3, 4, 6), (2, 3, 5, 6)),
        ((2, 1, 5, 4), (3, 4, 6), (2, 3, 5, 6)),
        ((1, 3, 5, 4), (2, 1, 4, 6), (2, 3, 5, 6)),  # both operands broadcast
        ((4,), (2, 4, 6), (2, 6)),
        ((2, 5, 4), (4,), (2, 5)),
        ((5, 4), (4, 6), (5, 6)),
    ],
)
def test_batched_matmul_runs_on_onednn_as_numpy_does(
    lhs: tuple[int, ...], rhs: tuple[int, ...], out: tuple[int, ...]
) -> None:
    """Batch dims broadcast by oneDNN (dims of 1), rank-1 operands promoted and the promoted
    dims dropped: numpy's matmul, NaN included, interpreter and generated module."""
    module = parse(matmul_program(lhs, rhs, out))
    inputs = random_inputs(module)
    inputs[0].reshape(-1)[1] = np.nan
    compiled = compile_module(module, "onednn", True)
    matmul = only(compiled, "nn.matmul")
    assert kernel_of(matmul).kernel_name.data == "matmul_onednn"
    assert not is_fully_connected(matmul)
    expected = Interpreter(module).run(inputs)
    np.testing.assert_array_equal(expected[0], np.matmul(*inputs))
    assert_same(expected, Interpreter(compiled).run(inputs))
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    assert_same(expected, run_generated(planned, inputs))


def test_matmul_dims_promote_and_pad_as_numpy() -> None:
    module = parse(matmul_program((4,), (2, 3, 4, 6), (2, 3, 6)))
    assert matmul_dims(only(module, "nn.matmul")) == (
        (1, 1, 1, 4),
        (2, 3, 4, 6),
        (2, 3, 1, 6),
    )


def fc_program(rows: int, k: int, n: int, gemm: bool) -> str:
    w_shape = (n, k) if gemm else (k, n)
    product = (
        f"nn.gemm %x, %w trans_b alpha 1.0 beta 1.0 : ({tensor((rows, k))}, {tensor(w_shape)})"
        if gemm
        else f"nn.matmul %x, %w : ({tensor((rows, k))}, {tensor(w_shape)})"
    )
    return f"""
func.func @f(%x: {tensor((rows, k))}) -> {tensor((rows, n))} {{
  %w = nn.constant dense<{dense(w_shape, 3)}> : {tensor(w_shape)}
  %y = {product} -> {tensor((rows, n))}
  func.return %y : {tensor((rows, n))}
}}"""


SHAPES = [(1, 20, 7), (1, 64, 10), (3, 20, 7), (12, 36, 50), (1, 17, 70)]


@pytest.mark.parametrize("gemm", [True, False])
@pytest.mark.parametrize(("rows", "k", "n"), SHAPES)
def test_the_inner_products_weights_layout_is_onednns_format_byte_for_byte(
    rows: int, k: int, n: int, gemm: bool
) -> None:
    """Our name of the format the inner product chose packs the weights as oneDNN's reorder
    does, padding included, for weights [N, K] (a gemm's trans_b) and [K, N] (a matmul)."""
    module = parse(fc_program(rows, k, n, gemm))
    op = only(module, "nn.gemm" if gemm else "nn.matmul")
    assert is_fully_connected(op)
    layout = fc_weights_layout(op)
    assert LayoutSpec.parse(layout).is_blocked
    wanted = fc_pd(op).md(b.dnnl_query_weights_md)
    weights = np.random.default_rng(0).standard_normal(nn.shape_of(op.operands[1]))
    weights = weights.astype(np.float32)
    packed = np.empty(wanted.size // 4, dtype=np.float32)
    reorder = p.Compiled(
        p.reorder_pd(fc_given_weights(op), wanted), (b.DNNL_ARG_SRC, b.DNNL_ARG_DST)
    )
    reorder({b.DNNL_ARG_SRC: weights, b.DNNL_ARG_DST: packed}, np.empty(0, np.uint8))
    np.testing.assert_array_equal(LayoutSpec.parse(layout).pack(weights).ravel(), packed)


@pytest.mark.parametrize("gemm", [True, False])
@pytest.mark.parametrize(("rows", "k", "n"), SHAPES)
def test_a_fully_connected_layer_runs_as_an_inner_product_or_matmul(
    rows: int, k: int, n: int, gemm: bool
) -> None:
    """Its weights stored at compile time in the format of the primitive (inner product at
    a few rows, matmul beyond: `fc_as_matmul`), or left plain
    (select-dispatch alone) and reordered at load: same results as the reference, NaN
    included, interpreter and generated module, and the declared workspace suffices."""
    module = parse(fc_program(rows, k, n, gemm))
    inputs = random_inputs(module)
    inputs[0][0, 1] = np.nan
    expected = Interpreter(module).run(inputs)
    name = "nn.gemm" if gemm else "nn.matmul"
    for pipeline in ("select-dispatch{{target={target} padding={padding}}}", None):
        compiled = (
            compile_module(module, "onednn", True)
            if pipeline is None
            else compile_module(module, "onednn", True, pipeline)
        )
        op = only(compiled, name)
        stored = encoding_name(op.operands[1].type)
        assert stored == ("" if pipeline else fc_weights_layout(op))
        compiled_op, _, _ = compiled_for(op)
        assert compiled_op.pd.implementation.startswith(("brgemm", "gemm", "x64", "brg:"))
        assert kernel_of(op).workspace.data >= compiled_op.scratchpad_bytes
        assert_same(expected, Interpreter(compiled).run(inputs))
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    assert_same(expected, run_generated(planned, inputs))


def test_at_a_few_rows_the_preferred_implementation_is_taken() -> None:
    """brgemm:avx2 over oneDNN's first choice at batch 1 (measured faster where the product
    streams the weights); beyond SMALL_BATCH_ROWS oneDNN's matmul on weights in its own
    format (measured faster than the inner product at a transformer's 197 tokens)."""
    small = only(parse(fc_program(1, 64, 10, True)), "nn.gemm")
    large = only(parse(fc_program(12, 36, 50, True)), "nn.gemm")
    assert not fc_as_matmul(small) and fc_as_matmul(large)
    assert fc_pd(small).implementation == "brgemm:avx2"
    assert fc_pd(large).implementation == first_matmul(large)


def first_matmul(op: nn.GemmOp) -> str:
    """oneDNN's first matmul implementation for `op`, weights `any`, with a bias row."""
    m, k = nn.shape_of(op.a)
    n = nn.shape_of(op.output)[1]
    pd = p.matmul_pd(
        b.MemoryDesc.with_strides((m, k), (k, 1)),
        b.MemoryDesc.with_tag((k, n), b.dnnl_format_tag_any),
        b.MemoryDesc.with_strides((1, n), (n, 1)),
        b.MemoryDesc.with_strides((m, n), (n, 1)),
    )
    return pd.implementation
