"""Matrix products as torch's exporters write them (classic opset 17, dynamo opset 18): a
fully connected layer at batch 1 (Gemm transB=1; MatMul + Add), batched and broadcast MatMul,
a self-attention block with MatMul and with Einsum, each checked against onnxruntime through
import, every target, padding on and off, interpreter and generated module."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnlayout.diagnostics import UserError
from nnlayout.frontends.onnx import import_model
from nnlayout.tests.helpers import check_against_onnxruntime

F = TensorProto.FLOAT
RNG = np.random.default_rng(26)


def weights(*shape: int) -> np.ndarray:
    return (RNG.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)


def model(
    nodes: Sequence[onnx.NodeProto],
    inputs: dict[str, Sequence[int]],
    outputs: Sequence[str],
    initializers: dict[str, np.ndarray],
    opset: int = 17,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        list(nodes),
        "matmul_patterns",
        [helper.make_tensor_value_info(n, F, list(s)) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, F, None) for n in outputs],
        [numpy_helper.from_array(v, n) for n, v in initializers.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def shape_constant(name: str, values: Sequence[int]) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def test_classic_linear_gemm_trans_b_at_batch_1(tmp_path: Path) -> None:
    """torch's Linear, classic export: Gemm(x, W[N, K], b, transB=1), three of them as a
    classifier (alexnet's shape, small), relu between."""
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h1"], alpha=1.0, beta=1.0, transB=1),
        helper.make_node("Relu", ["h1"], ["r1"]),
        helper.make_node("Gemm", ["r1", "w2", "b2"], ["h2"], alpha=1.0, beta=1.0, transB=1),
        helper.make_node("Relu", ["h2"], ["r2"]),
        helper.make_node("Gemm", ["r2", "w3", "b3"], ["y"], alpha=1.0, beta=1.0, transB=1),
    ]
    init = {
        "w1": weights(36, 20).T.copy(),
        "b1": weights(20),
        "w2": weights(20, 20).T.copy(),
        "b2": weights(20),
        "w3": weights(20, 7).T.copy(),
        "b3": weights(7),
    }
    check_against_onnxruntime(model(nodes, {"x": (1, 36)}, ["y"], init), tmp_path)


@pytest.mark.parametrize("rows", [1, 3])
def test_dynamo_linear_matmul_add(tmp_path: Path, rows: int) -> None:
    """torch's Linear, dynamo export (opset 18): MatMul(x, W^T constant [K, N]) + Add(b)."""
    nodes = [
        helper.make_node("MatMul", ["x", "wt"], ["h"]),
        helper.make_node("Add", ["h", "b"], ["y"]),
    ]
    init = {"wt": weights(36, 13), "b": weights(13)}
    check_against_onnxruntime(model(nodes, {"x": (rows, 36)}, ["y"], init, 18), tmp_path)


def test_linear_on_3d_activation(tmp_path: Path) -> None:
    """A transformer's Linear on [B, T, C]: MatMul with constant [C, N] weights, then Add."""
    nodes = [
        helper.make_node("MatMul", ["x", "wt"], ["h"]),
        helper.make_node("Add", ["h", "b"], ["y"]),
    ]
    init = {"wt": weights(12, 20), "b": weights(20)}
    check_against_onnxruntime(model(nodes, {"x": (2, 5, 12)}, ["y"], init), tmp_path)


def test_vit_mlp_block_runs_its_adds_and_gelu_in_onednn(tmp_path: Path) -> None:
    """torchvision's ViT encoder MLP, dynamo export (opset 20): LayerNormalization, MatMul +
    Add of a [D] bias, Gelu, MatMul + Add, the residual Add, on [1, T, D] tokens (D = 20,
    no multiple of the blocks). On host each MatMul takes its bias add (`nn.fused_matmul`:
    oneDNN's matmul with a bias), the first also the exact GELU (a gelu_erf post-op, guarded:
    it turns +inf into NaN), and the residual add is oneDNN's binary on plain data: the
    census lists no fallback."""
    from nnlayout.kernels.targets import get_target
    from nnlayout.reports.census import kernel_census
    from nnlayout.tests.helpers import DEFAULT_PIPELINE, compile_module

    nodes = [
        helper.make_node("LayerNormalization", ["x", "ln_w", "ln_b"], ["n"], axis=-1),
        helper.make_node("MatMul", ["n", "w1"], ["h1"]),
        helper.make_node("Add", ["h1", "b1"], ["a1"]),
        helper.make_node("Gelu", ["a1"], ["g"], approximate="none"),
        helper.make_node("MatMul", ["g", "w2"], ["h2"]),
        helper.make_node("Add", ["h2", "b2"], ["a2"]),
        helper.make_node("Add", ["x", "a2"], ["y"]),
    ]
    init = {
        "ln_w": weights(20),
        "ln_b": weights(20),
        "w1": weights(20, 28),
        "b1": weights(28),
        "w2": weights(28, 20),
        "b2": weights(20),
    }
    module = check_against_onnxruntime(model(nodes, {"x": (1, 7, 20)}, ["y"], init, 20), tmp_path)
    census = kernel_census(
        compile_module(module, "host", True, DEFAULT_PIPELINE), get_target("host")
    )
    assert census.fallbacks == {}, census.reasons
    assert census.kernels == {
        "layer_norm_onednn": 1,
        "fused_matmul_onednn": 2,
        "add_onednn": 1,
    }, census.kernels


@pytest.mark.parametrize(
    ("lhs", "rhs"),
    [
        ((2, 3, 5, 4), (2, 3, 4, 6)),  # [B, H, T, D] x [B, H, D, T]
        ((2, 1, 5, 4), (3, 4, 6)),  # batch dims broadcast both ways
        ((4,), (2, 4, 6)),  # rank-1 lhs
        ((2, 5, 4), (4,)),  # rank-1 rhs
        ((5, 4), (4, 6)),
    ],
)
def test_batched_matmul_of_activations(
    tmp_path: Path, lhs: tuple[int, ...], rhs: tuple[int, ...]
) -> None:
    nodes = [helper.make_node("MatMul", ["a", "b"], ["y"])]
    check_against_onnxruntime(model(nodes, {"a": lhs, "b": rhs}, ["y"], {}), tmp_path)


T, C, H = 5, 12, 3
D = C // H


def _heads(name: str, out: str, perm: Sequence[int]) -> list[onnx.NodeProto]:
    """x @ W + b, reshaped to [1, T, H, D] and transposed by `perm`."""
    return [
        helper.make_node("MatMul", ["x", f"w{name}"], [f"{name}_mm"]),
        helper.make_node("Add", [f"{name}_mm", f"b{name}"], [f"{name}_lin"]),
        helper.make_node("Reshape", [f"{name}_lin", "heads_shape"], [f"{name}_heads"]),
        helper.make_node("Transpose", [f"{name}_heads"], [out], perm=list(perm)),
    ]


def _attention_init() -> dict[str, np.ndarray]:
    init = {f"w{n}": weights(C, C) for n in "qkvo"}
    init |= {f"b{n}": weights(C) for n in "qkvo"}
    init["heads_shape"] = shape_constant("heads_shape", (1, T, H, D))
    init["merged_shape"] = shape_constant("merged_shape", (1, T, C))
    init["scale"] = np.array(1 / np.sqrt(D), dtype=np.float32)
    return init


def _attention_tail(context: str) -> list[onnx.NodeProto]:
    """[1, H, T, D] back to [1, T, C], then the output projection."""
    return [
        helper.make_node("Transpose", [context], ["context_t"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["context_t", "merged_shape"], ["merged"]),
        helper.make_node("MatMul", ["merged", "wo"], ["out_mm"]),
        helper.make_node("Add", ["out_mm", "bo"], ["y"]),
    ]


def test_self_attention_block_with_matmul(tmp_path: Path) -> None:
    """Self-attention as torch exports it at opset 17: q, k, v projections of [1, T, C],
    heads by Reshape/Transpose (k transposed to [1, H, D, T]), scores scaled by Mul,
    Softmax(axis=-1), context by MatMul with v, heads merged, output projection."""
    nodes = [
        *_heads("q", "q", (0, 2, 1, 3)),
        *_heads("k", "kt", (0, 2, 3, 1)),
        *_heads("v", "v", (0, 2, 1, 3)),
        helper.make_node("MatMul", ["q", "kt"], ["scores"]),
        helper.make_node("Mul", ["scores", "scale"], ["scaled"]),
        helper.make_node("Softmax", ["scaled"], ["attn"], axis=-1),
        helper.make_node("MatMul", ["attn", "v"], ["context"]),
        *_attention_tail("context"),
    ]
    check_against_onnxruntime(model(nodes, {"x": (1, T, C)}, ["y"], _attention_init()), tmp_path)


def test_self_attention_block_with_einsum(tmp_path: Path) -> None:
    """The same with the products as Einsum ("bhid,bhjd->bhij", "bhij,bhjd->bhid"), scores
    divided by the scale's inverse (Div), at opset 18."""
    init = _attention_init()
    init["inverse_scale"] = np.array(np.sqrt(D), dtype=np.float32)
    nodes = [
        *_heads("q", "q", (0, 2, 1, 3)),
        *_heads("k", "k", (0, 2, 1, 3)),
        *_heads("v", "v", (0, 2, 1, 3)),
        helper.make_node("Einsum", ["q", "k"], ["scores"], equation="bhid,bhjd->bhij"),
        helper.make_node("Div", ["scores", "inverse_scale"], ["scaled"]),
        helper.make_node("Softmax", ["scaled"], ["attn"], axis=-1),
        helper.make_node("Einsum", ["attn", "v"], ["context"], equation="bhij,bhjd->bhid"),
        *_attention_tail("context"),
    ]
    check_against_onnxruntime(model(nodes, {"x": (1, T, C)}, ["y"], init, 18), tmp_path)


@pytest.mark.parametrize(
    ("equation", "lhs", "rhs"),
    [
        ("...ij,...jk->...ik", (2, 3, 5, 4), (2, 3, 4, 6)),
        ("bij,bjk->bik", (2, 5, 4), (2, 4, 6)),
        ("bnd,md->bnm", (2, 5, 4), (6, 4)),
        ("ij,jk", (5, 4), (4, 6)),
        ("bid,bjd->bij", (2, 5, 4), (2, 3, 4)),
        ("bhij,bhjd->bhdi", (2, 3, 5, 4), (2, 3, 4, 6)),  # a transposed result
        # maxvit_t's, both exporters: upper case, spaces, rank 5
        ("B G H I D, B G H J D -> B G H I J", (1, 2, 3, 5, 4), (1, 2, 3, 6, 4)),
        ("B G H I J, B G H J D -> B G H I D", (1, 2, 3, 5, 6), (1, 2, 3, 6, 4)),
        # several contracted indices merged into one; none (an outer product); sums first
        ("bchw,bdhw->bcd", (2, 5, 4, 3), (2, 6, 4, 3)),
        ("ijk,jkl->il", (2, 3, 4), (3, 4, 5)),
        ("i,j->ij", (5,), (7,)),
        ("bi,bj->bij", (2, 5), (2, 7)),
        ("bij,bjk->bk", (2, 5, 4), (2, 4, 6)),
        ("ij,ij->ij", (2, 3), (2, 3)),
        ("ij,ji->i", (4, 3), (3, 4)),
        ("ij,kj->", (4, 3), (5, 3)),
    ],
)
def test_einsum_contractions(
    tmp_path: Path, equation: str, lhs: tuple[int, ...], rhs: tuple[int, ...]
) -> None:
    nodes = [helper.make_node("Einsum", ["a", "b"], ["y"], equation=equation)]
    check_against_onnxruntime(model(nodes, {"a": lhs, "b": rhs}, ["y"], {}, 12), tmp_path)


def test_einsum_with_constant_weights(tmp_path: Path) -> None:
    """ "bnd,md->bnm": a Linear as Einsum, its weights [N, K] constant."""
    nodes = [helper.make_node("Einsum", ["x", "w"], ["y"], equation="bnd,md->bnm")]
    init = {"w": weights(7, 12)}
    check_against_onnxruntime(model(nodes, {"x": (2, 5, 12)}, ["y"], init, 12), tmp_path)


@pytest.mark.parametrize("equation", ["bij->bji", "bij->bj", "ij->"])
def test_einsum_of_one_operand(tmp_path: Path, equation: str) -> None:
    """A permutation, a sum over an index, a sum of everything (a scalar)."""
    nodes = [helper.make_node("Einsum", ["a"], ["y"], equation=equation)]
    check_against_onnxruntime(
        model(nodes, {"a": (2, 5, 4)[-len(equation.split("-")[0]) :]}, ["y"], {}, 12), tmp_path
    )


@pytest.mark.parametrize(
    ("equation", "shapes", "why"),
    [
        ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], "3 operands"),
        ("ii->i", [(3, 3)], "repeated index"),
    ],
)
def test_einsum_refused_naming_the_equation(
    equation: str, shapes: list[tuple[int, ...]], why: str
) -> None:
    names = [f"x{i}" for i in range(len(shapes))]
    nodes = [helper.make_node("Einsum", names, ["y"], equation=equation, name="e")]
    onnx_model = model(nodes, dict(zip(names, shapes, strict=True)), ["y"], {}, 12)
    with pytest.raises(UserError) as error:
        import_model(onnx_model)
    message = str(error.value)
    assert "\n" not in message
    assert equation in message and why in message and "Einsum" in message
