"""Attention masks as transformers (v5) builds them and torch's exporters write them: the int64
attention mask cast to bool, combined by And with a constant mask, indexed (classic: Flatten
and Gather at constant indices; dynamo: GatherND), expanded, turned into an additive bias by
Where, and the softmax's result tested with IsNaN (a row all masked). Also Or, Xor and Not of
run-time masks, Cast of floats to bool (NaN and -0.0 included) and GatherND at run-time
indices. Each against onnxruntime on every target, padding on and off, interpreter and
generated module."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from xdsl.dialects.builtin import i1

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects import nn
from nnlayout.dialects.layout import encoding_name
from nnlayout.frontends.onnx import import_model
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    check_against_onnxruntime,
    compile_module,
    like_onnxruntime_everywhere,
    typed_model,
)

T, D = 6, 8
BOOL, INT64, FLOAT = TensorProto.BOOL, TensorProto.INT64, TensorProto.FLOAT


def masked_attention(exporter: str) -> onnx.ModelProto:
    """softmax(x @ x^T + where(keep, 0, -3.4e38)), NaN rows zeroed, @ x, for x [1, T, D]
    and keep = bool(attention_mask) and a constant bidirectional mask, indexed as
    `exporter` writes it, expanded to [1, 1, T, T]."""
    constants = {
        "everywhere": np.ones((1, 1, T, T), np.bool_),
        "zero": np.float32(0),
        "lowest": np.float32(np.finfo(np.float32).min),
        "shape4": np.array([1, 1, T, T], np.int64),
        "one_axis": np.array([1], np.int64),
    }
    nodes = [helper.make_node("Cast", ["attention_mask"], ["as_bool"], to=BOOL)]
    if exporter == "classic":  # Flatten, then Gather at constant indices, then Reshape
        constants["columns"] = np.tile(np.arange(T, dtype=np.int64), T)
        constants["shape"] = np.array([1, 1, T, T], np.int64)
        nodes += [
            helper.make_node("Flatten", ["as_bool"], ["flat"], axis=0),
            helper.make_node("Gather", ["flat", "columns"], ["picked"], axis=1),
            helper.make_node("Reshape", ["picked", "shape"], ["padding"]),
        ]
    else:  # GatherND of [1, T] at [[0, j] for each (i, j)]
        pairs = [[0, j] for _ in range(T) for j in range(T)]
        constants["pairs"] = np.array(pairs, np.int64).reshape(1, 1, T, T, 2)
        nodes.append(helper.make_node("GatherND", ["as_bool", "pairs"], ["padding"]))
    nodes += [
        helper.make_node("And", ["everywhere", "padding"], ["keep"]),
        helper.make_node("Expand", ["keep", "shape4"], ["keep4"]),
        helper.make_node("Where", ["keep4", "zero", "lowest"], ["bias"]),
        helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["x", "xt"], ["s"]),
        helper.make_node("Unsqueeze", ["s", "one_axis"], ["scores"]),
        helper.make_node("Add", ["scores", "bias"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["p"], axis=-1),
        helper.make_node("IsNaN", ["p"], ["nan"]),
        helper.make_node("Where", ["nan", "zero", "p"], ["clean"]),
        helper.make_node("Squeeze", ["clean", "one_axis"], ["p3"]),
        helper.make_node("MatMul", ["p3", "x"], ["y"]),
    ]
    inputs = {"x": (FLOAT, [1, T, D]), "attention_mask": (INT64, [1, T])}
    return typed_model(nodes, inputs, {"y": (FLOAT, [1, T, D])}, constants)


@pytest.mark.parametrize("exporter", ["classic", "dynamo"])
def test_transformers_attention_mask_runs_like_onnxruntime(exporter: str) -> None:
    x = np.random.default_rng(6).standard_normal((1, T, D)).astype(np.float32)
    mask = np.array([[1, 1, 1, 1, 0, 0]], np.int64)  # the last two positions padding
    module = like_onnxruntime_everywhere(masked_attention(exporter), [x, mask])
    casts = [op for op in module.walk() if isinstance(op, nn.CastOp)]
    assert any(nn.tensor_type(op.output).element_type == i1 for op in casts)
    assert any(isinstance(op, nn.LogicalOp) for op in module.walk())


@pytest.mark.parametrize("op_type", ["And", "Or", "Xor", "Not"])
def test_logical_operators_of_run_time_masks(op_type: str) -> None:
    """a > 0 <op> b > 0 (b [D] broadcast against a [2, D]), as bool and as its float."""
    operands = ["ma"] if op_type == "Not" else ["ma", "mb"]
    nodes = [
        helper.make_node("Greater", ["a", "zero"], ["ma"]),
        helper.make_node("Greater", ["b", "zero"], ["mb"]),
        helper.make_node(op_type, operands, ["m"]),
    ]
    inputs = {"a": (FLOAT, [2, D]), "b": (FLOAT, [D])}
    model = typed_model(nodes, inputs, {"m": (BOOL, [2, D])}, {"zero": np.float32(0)})
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((2, D)).astype(np.float32), rng.standard_normal(D).astype(np.float32)
    module = like_onnxruntime_everywhere(model, [a, b])
    wanted = "xor" if op_type == "Not" else op_type.lower()
    assert [op.operation.data for op in module.walk() if isinstance(op, nn.LogicalOp)] == [wanted]


def test_cast_to_bool_is_true_where_non_zero() -> None:
    """NaN and infinities are true, +0.0 and -0.0 false (ONNX's Cast; numpy's astype)."""
    model = typed_model(
        [helper.make_node("Cast", ["x"], ["m"], to=BOOL)],
        {"x": (FLOAT, [2, 4])},
        {"m": (BOOL, [2, 4])},
        {},
    )
    x = np.array([[0.0, -0.0, np.nan, 1e-30], [-np.inf, np.inf, -2.0, 0.5]], np.float32)
    like_onnxruntime_everywhere(model, [x])


@pytest.mark.parametrize(
    ("data", "at", "result"),
    [([3, 4], [2, 1], [2, 4]), ([2, 3, 4], [2, 2, 2], [2, 2, 4]), ([2, 3, 4], [3], [])],
    ids=["rows", "pairs of a 3-D tensor", "one element"],
)
def test_gather_nd_at_run_time_indices(data: list[int], at: list[int], result: list[int]) -> None:
    """Indices given at run time, negative ones among them: the flat row is computed in
    i64 from each axis' index gathered from 0..size-1."""
    model = typed_model(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("GatherND", ["r", "at"], ["y"])],
        {"x": (FLOAT, data), "at": (INT64, at)},
        {"y": (FLOAT, result)},
        {},
    )
    rng = np.random.default_rng(9)
    sizes = np.array(data[: at[-1]])
    indices = rng.integers(-sizes, sizes, (*at[:-1], at[-1]))
    like_onnxruntime_everywhere(model, [rng.standard_normal(data).astype(np.float32), indices])


@pytest.mark.parametrize("known", [True, False], ids=["constant indices", "run-time indices"])
def test_gather_nd_with_batch_dims(known: bool) -> None:
    """batch_dims 1: data [2, 3, 4] and indices [2, 2, 1] share their first axis; each of the
    two batches gathers rows of its own [3, 4] (one index negative)."""
    at = np.array([[[2], [-3]], [[1], [1]]], np.int64)
    node = helper.make_node("GatherND", ["x", "at"], ["y"], batch_dims=1)
    inputs = {"x": (FLOAT, [2, 3, 4])} | ({} if known else {"at": (INT64, [2, 2, 1])})
    model = typed_model([node], inputs, {"y": (FLOAT, [2, 2, 4])}, {"at": at} if known else {})
    x = np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32)
    like_onnxruntime_everywhere(model, [x] if known else [x, at])


def test_gather_nd_at_a_run_time_index_out_of_range_is_an_error_at_the_node() -> None:
    """Index 3 on an axis of 3, with 0 on the next: as a flat row it would be in range (row
    12 of 24), so each axis' index is checked, and the error is named at the node."""
    model = typed_model(
        [helper.make_node("GatherND", ["x", "at"], ["y"], name="nd")],
        {"x": (FLOAT, [2, 3, 4]), "at": (INT64, [1, 3])},
        {"y": (FLOAT, [1])},
        {},
    )
    module = import_model(model).module
    x = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(DiagnosticError) as error:
        Interpreter(module).run([x, np.array([[0, 3, 0]], np.int64)])
    assert "index 3 at [0] of the indices is out of range for axis 0 of size 3" in str(error.value)
    assert "nd" in str(error.value)


@pytest.mark.parametrize("exporter", ["classic", "dynamo"])
def test_index_constants_the_importer_makes_go_to_the_weights_file(
    tmp_path: Path, exporter: str
) -> None:
    """GatherND's flat indices (T * T of them, 4 MB at 512 tokens) and a mask's gather at
    constant indices are constants like initializers: past the inline limit, in the weights
    file, and the model still runs like onnxruntime (random masks, rows all masked too)."""
    module = check_against_onnxruntime(masked_attention(exporter), tmp_path)
    [gather] = [op for op in module.walk() if isinstance(op, nn.GatherOp)]
    indices = gather.indices.owner
    assert isinstance(indices, nn.ConstantOp) and indices.external is not None


def test_masks_of_padded_blocked_channels_keep_padding_lanes_false() -> None:
    """A 20-channel convolution (padded to 32 lanes in NCHW16c) -> xor(not(c > 0 or
    isnan(c)), bool(c)), summed over channels as floats, like onnxruntime on every target
    with a NaN in the input. On avx512 the isnan and the or run in NCHW16c (the ops with a
    scalar operand, broadcast along the blocked channels, run plain). Each blocked kernel
    re-zeroes its result's padding lanes, so a mask's own padding never reaches the sums."""
    rng = np.random.default_rng(9)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Greater", ["c", "zero"], ["positive"]),
        helper.make_node("IsNaN", ["c"], ["nan"]),
        helper.make_node("Or", ["positive", "nan"], ["either"]),
        helper.make_node("Not", ["either"], ["neither"]),
        helper.make_node("Cast", ["c"], ["nonzero"], to=BOOL),
        helper.make_node("Xor", ["neither", "nonzero"], ["m"]),
        helper.make_node("Cast", ["m"], ["f"], to=FLOAT),
        helper.make_node("ReduceSum", ["f", "axes"], ["y"], keepdims=1),
    ]
    constants = {
        "w": rng.standard_normal((20, 3, 3, 3)).astype(np.float32),
        "zero": np.float32(0),
        "axes": np.array([1], np.int64),
    }
    model = typed_model(
        nodes, {"x": (FLOAT, [1, 3, 6, 6])}, {"y": (FLOAT, [1, 1, 6, 6])}, constants
    )
    x = rng.standard_normal((1, 3, 6, 6)).astype(np.float32)
    x[0, :, 0, 0] = np.nan  # NaN through the convolution's window at the corner
    module = like_onnxruntime_everywhere(model, [x])
    blocked = compile_module(module, "avx512", True, DEFAULT_PIPELINE)
    layouts = {
        encoding_name(op.results[0].type) for op in blocked.walk() if isinstance(op, nn.LogicalOp)
    }
    assert "NCHW16c" in layouts, layouts
