"""Indices given at run time (`nn.gather`, i64 data): a language model's token ids picking
rows of its embedding table, as torch's two exporters write `nn.Embedding` (the classic one:
Gather(weight, ids); the dynamo one: Gather(weight, ids, axis=0), the table shared with the
tied output layer), an int64 attention mask made float and added to attention scores, token
type ids, negative indices and a gather along an inner axis of run-time data. Each against
onnxruntime on every target, padding on and off, interpreter and generated module; an index
out of range is one located error, and random inputs keep indices in range."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from xdsl.dialects.builtin import i64

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects import nn
from nnlayout.frontends.onnx import import_model
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    assert_one_clean_error,
    check_against_onnxruntime,
    compile_module,
    like_onnxruntime_everywhere,
    onnx_file,
    parse,
    random_inputs,
    tool_process,
    typed_model,
)

V, T, D = 50, 6, 16  # vocabulary, sequence length, width


def _ids(*shape: int) -> tuple[int, list[int]]:
    return TensorProto.INT64, list(shape)


def language_model_head(exporter: str) -> onnx.ModelProto:
    """logits = LayerNorm(wte[ids] + wpe[0..T-1]) @ wte^T, as `exporter` writes a GPT's
    embeddings and tied output layer (the positions, torch.arange, a constant)."""
    rng = np.random.default_rng(1)
    table = rng.standard_normal((V, D)).astype(np.float32)
    constants = {
        "wte": table,
        "wpe": rng.standard_normal((T, D)).astype(np.float32),
        "positions": np.arange(T, dtype=np.int64),
        "gamma": rng.uniform(0.5, 1.5, D).astype(np.float32),
        "beta": rng.standard_normal(D).astype(np.float32),
        "wte_t": np.ascontiguousarray(table.T),
    }
    axis = {} if exporter == "classic" else {"axis": 0}
    nodes = [
        helper.make_node("Gather", ["wte", "ids"], ["tokens"], **axis),
        helper.make_node("Gather", ["wpe", "positions"], ["where"], **axis),
        helper.make_node("Add", ["tokens", "where"], ["x"]),
        helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["n"], axis=-1),
        helper.make_node("MatMul", ["n", "wte_t"], ["logits"]),
    ]
    return typed_model(
        nodes, {"ids": _ids(1, T)}, {"logits": (TensorProto.FLOAT, [1, T, V])}, constants
    )


@pytest.mark.parametrize("exporter", ["classic", "dynamo"])
def test_a_language_models_embeddings_run_like_onnxruntime(tmp_path: Path, exporter: str) -> None:
    module = check_against_onnxruntime(language_model_head(exporter), tmp_path)
    [gather] = [op for op in module.walk() if isinstance(op, nn.GatherOp)]  # wpe's: a slice
    assert nn.tensor_type(gather.indices).element_type == i64
    assert gather.axis.value.data == 0


def attention_with_a_padding_mask() -> onnx.ModelProto:
    """BERT's embeddings and one attention over them: x = wte[ids] + types_table[types];
    scores = x @ x^T + (1 - float(mask)) * -10000 (the int64 attention mask, unsqueezed to
    [1, 1, 1, T] and cast), softmax, @ x."""
    rng = np.random.default_rng(2)
    constants = {
        "wte": rng.standard_normal((V, D)).astype(np.float32),
        "types_table": rng.standard_normal((2, D)).astype(np.float32),
        "axes": np.array([1, 2], np.int64),
        "one": np.float32(1),
        "big": np.float32(-10000),
    }
    nodes = [
        helper.make_node("Gather", ["wte", "ids"], ["tokens"]),
        helper.make_node("Gather", ["types_table", "types"], ["kinds"]),
        helper.make_node("Add", ["tokens", "kinds"], ["x"]),
        helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["x", "xt"], ["s"]),
        helper.make_node("Unsqueeze", ["s", "one_axis"], ["scores"]),
        helper.make_node("Unsqueeze", ["mask", "axes"], ["m4"]),
        helper.make_node("Cast", ["m4"], ["mf"], to=TensorProto.FLOAT),
        helper.make_node("Sub", ["one", "mf"], ["inverted"]),
        helper.make_node("Mul", ["inverted", "big"], ["bias"]),
        helper.make_node("Add", ["scores", "bias"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["p"], axis=-1),
        helper.make_node("Squeeze", ["p", "one_axis"], ["p3"]),
        helper.make_node("MatMul", ["p3", "x"], ["y"]),
    ]
    constants["one_axis"] = np.array([1], np.int64)
    inputs = {"ids": _ids(1, T), "mask": _ids(1, T), "types": _ids(1, T)}
    return typed_model(nodes, inputs, {"y": (TensorProto.FLOAT, [1, T, D])}, constants)


def test_an_int64_attention_mask_and_token_types_run_like_onnxruntime(tmp_path: Path) -> None:
    module = check_against_onnxruntime(attention_with_a_padding_mask(), tmp_path)
    ids, mask, types = random_inputs(module)
    assert ids.max() < V and types.max() < 2 and mask.max() < 2 and min(ids.min(), mask.min()) >= 0
    assert len(np.unique(mask)) == 2  # both kinds of position: the mask matters
    casts = [op for op in module.walk() if isinstance(op, nn.CastOp)]
    assert [nn.tensor_type(op.input).element_type for op in casts] == [i64]


def test_negative_indices_count_from_the_end() -> None:
    ids = np.array([[0, -1, 3, -V, V - 1, -2]], np.int64)
    like_onnxruntime_everywhere(language_model_head("dynamo"), [ids])


def test_a_gather_along_an_inner_axis_of_run_time_data() -> None:
    """y = relu(x)[:, idx, :] for idx of shape [2, 2] given at run time: the result
    [2, 2, 2, 3] puts the indices' axes where the gathered one was."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Gather", ["r", "idx"], ["y"], axis=1),
    ]
    inputs = {"x": (TensorProto.FLOAT, [2, 5, 3]), "idx": _ids(2, 2)}
    model = typed_model(nodes, inputs, {"y": (TensorProto.FLOAT, [2, 2, 2, 3])}, {})
    x = np.random.default_rng(4).standard_normal((2, 5, 3)).astype(np.float32)
    like_onnxruntime_everywhere(model, [x, np.array([[4, 0], [-1, 2]], np.int64)])


def test_token_ids_compared_with_a_padding_id() -> None:
    """x = wte[ids] * float(ids != pad) and ids < 3 selects 0: comparisons of indices (exact,
    as integers) give masks."""
    table = np.random.default_rng(8).standard_normal((V, D)).astype(np.float32)
    nodes = [
        helper.make_node("Gather", ["wte", "ids"], ["x"]),
        helper.make_node("Equal", ["ids", "pad"], ["is_pad"]),
        helper.make_node("Not", ["is_pad"], ["kept"]),
        helper.make_node("Cast", ["kept"], ["weight"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["weight", "last"], ["w3"]),
        helper.make_node("Mul", ["x", "w3"], ["weighted"]),
        helper.make_node("Less", ["ids", "three"], ["small"]),
        helper.make_node("Unsqueeze", ["small", "last"], ["s3"]),
        helper.make_node("Where", ["s3", "zero", "weighted"], ["y"]),
    ]
    constants = {
        "wte": table,
        "pad": np.int64(V - 1),
        "three": np.int64(3),
        "last": np.array([2], np.int64),
        "zero": np.float32(0),
    }
    model = typed_model(
        nodes, {"ids": _ids(1, T)}, {"y": (TensorProto.FLOAT, [1, T, D])}, constants
    )
    ids = np.array([[V - 1, 2, 7, V - 1, 0, 11]], np.int64)
    like_onnxruntime_everywhere(model, [ids])


def test_an_index_out_of_range_is_an_error_at_the_gather(tmp_path: Path) -> None:
    """Not numpy's wrap nor its IndexError: one error from either backend, located in the
    user's file (the generated module runs a copy of the planned IR, in a folder since gone)."""
    module = import_model(language_model_head("classic"), inline_limit=1 << 20).module
    bad = np.array([[0, 1, V, 2, 3, 4]], np.int64)
    with pytest.raises(DiagnosticError, match=rf"index {V} at \[0, 2\] .* axis 0 of size {V}"):
        Interpreter(module).run([bad])
    np.save(tmp_path / "ids.npy", np.array([[0, 1, 2, -V - 1, 3, 4]], np.int64))
    done = tool_process("nnlayout-import", onnx_file(language_model_head("classic"))(tmp_path))
    assert done.returncode == 0, done.stderr
    for backend in ("interpreter", "generated"):
        args = [str(tmp_path / "m.mlir"), "-p", "default-pipeline", "--backend", backend]
        args += ["--input", str(tmp_path / "ids.npy"), "--output-dir", str(tmp_path / backend)]
        done = tool_process("nnlayout-run", args)
        expected = f"nn.gather: index {-V - 1} at [0, 3] of the indices is out of range"
        assert_one_clean_error(done.returncode, done.stdout, done.stderr, expected)
        assert done.stderr.startswith(f"{tmp_path / 'm.mlir'}:")  # the user's file, not a copy
        assert not (tmp_path / backend).exists()


def test_random_indices_stay_in_range_of_what_they_index() -> None:
    """`--random-inputs` gives token ids below the table's size, in the imported module and
    in the planned one (where the gather reads them inside an nn.compute, or reads a
    transposed copy an nn.compute wrote into the arena), i64 or i32."""
    module = import_model(language_model_head("classic"), inline_limit=1 << 20).module
    transposed = parse("""
func.func @f(%ids: tensor<2x3xi64>, %small: tensor<4xi32>) -> (tensor<3x2x4xf32>, tensor<4x4xf32>) {
  %table = nn.constant dense<1.0> : tensor<1000x4xf32>
  %t = nn.transpose %ids perm [1, 0] : tensor<2x3xi64> -> tensor<3x2xi64>
  %x = nn.gather %table, %t axis 0 : (tensor<1000x4xf32>, tensor<3x2xi64>) -> tensor<3x2x4xf32>
  %y = nn.gather %table, %small axis 0 : (tensor<1000x4xf32>, tensor<4xi32>) -> tensor<4x4xf32>
  func.return %x, %y : tensor<3x2x4xf32>, tensor<4x4xf32>
}""")
    for program, bound in ((module, V), (transposed, 1000)):
        planned = compile_module(program, "host", True, DEFAULT_PIPELINE)
        for compiled in (program, planned):
            drawn = [random_inputs(compiled, seed) for seed in range(3)]
            for ids in (x for inputs in drawn for x in inputs):
                assert ids.dtype in (np.int64, np.int32) and ids.min() >= 0 and ids.max() < bound
            for argument in zip(*drawn, strict=True):  # each in the table's range, not 0..1
                assert max(int(x.max()) for x in argument) >= 2


@pytest.mark.parametrize(
    ("node", "output_type", "expected"),
    [
        (
            helper.make_node("Div", ["ids", "ids"], ["y"]),
            TensorProto.INT64,
            "nn.div: does not take i1 (mask) or i64 (index) data",
        ),
        (
            helper.make_node("Cast", ["ids"], ["y"], to=TensorProto.INT8),
            TensorProto.INT8,
            "Cast of 'ids', computed at run time, from i64 to INT8",
        ),
    ],
    ids=["div", "cast"],
)
def test_arithmetic_beyond_add_sub_mul_on_indices_is_refused_in_one_line(
    tmp_path: Path, node: onnx.NodeProto, output_type: int, expected: str
) -> None:
    model = typed_model([node], {"ids": _ids(1, T)}, {"y": (output_type, [1, T])}, {})
    done = tool_process("nnlayout-import", onnx_file(model)(tmp_path))
    assert_one_clean_error(done.returncode, done.stdout, done.stderr, expected)
