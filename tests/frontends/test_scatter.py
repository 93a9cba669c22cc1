"""ScatterND and ScatterElements at constant indices into data, or of updates, computed at run
time: BART's shift_tokens_right as both of torch's exporters write it (classic: ScatterND of the
ids shifted by one into zeros, then of the start token; dynamo: slice_scatter and
select_scatter as ScatterElements), float rows and elements scattered, and a key/value cache
written at a position computed at run time as each exporter writes `cache.index_copy(2, pos,
k)` and `cache[:, :, pos] = k` (`nn.scatter`). Against onnxruntime on every target, padding on
and off, interpreter and generated module (integers bit for bit); with each reduction (add,
mul, max, min: repeated indices accumulate), at constant and run-time indices; an unknown
reduction is refused in one line, and a run-time index out of range is an error at the
node."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects import nn
from nnlayout.frontends.onnx import import_model
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    assert_one_clean_error,
    compile_module,
    count_ops,
    like_onnxruntime_everywhere,
    onnx_file,
    tool_process,
    typed_model,
)

F, I64 = TensorProto.FLOAT, TensorProto.INT64
T, START, PAD = 7, 2, 1
RNG = np.random.default_rng(12)


def _ids() -> np.ndarray:
    ids = RNG.integers(3, 50, (1, T), dtype=np.int64)
    ids[0, 4] = -100  # a label to ignore: the shifted ids hold PAD there
    return ids


def shift_tokens_right(exporter: str) -> onnx.ModelProto:
    """shifted = zeros; shifted[:, 1:] = ids[:, :-1]; shifted[:, 0] = START; then -100 -> PAD."""
    constants = {
        "zeros": np.zeros((1, T), np.int64),
        "starts": np.array([0], np.int64),
        "ends": np.array([T - 1], np.int64),
        "axes": np.array([1], np.int64),
        "ignored": np.array(-100, np.int64),
        "pad": np.array(PAD, np.int64),
    }
    nodes = [helper.make_node("Slice", ["ids", "starts", "ends", "axes"], ["head"])]
    if exporter == "classic":
        constants["rows"] = np.array([[[0, j]] for j in range(1, T)], np.int64).reshape(1, T - 1, 2)
        constants["first"] = np.array([[[0, 0]]], np.int64).reshape(1, 1, 2)
        constants["start"] = np.full((1, 1), START, np.int64)
        nodes += [
            helper.make_node("ScatterND", ["zeros", "rows", "head"], ["shifted"]),
            helper.make_node("ScatterND", ["shifted", "first", "start"], ["started"]),
        ]
    else:
        constants["columns"] = np.arange(1, T, dtype=np.int64)[None]
        constants["column0"] = np.zeros((1, 1), np.int64)
        constants["start"] = np.full((1, 1), START, np.int64)
        nodes += [
            helper.make_node("ScatterElements", ["zeros", "columns", "head"], ["shifted"], axis=1),
            helper.make_node(
                "ScatterElements", ["shifted", "column0", "start"], ["started"], axis=1
            ),
        ]
    nodes += [
        helper.make_node("Equal", ["started", "ignored"], ["is_ignored"]),
        helper.make_node("Where", ["is_ignored", "pad", "started"], ["y"]),
    ]
    return typed_model(nodes, {"ids": (I64, [1, T])}, {"y": (I64, [1, T])}, constants)


@pytest.mark.parametrize("exporter", ["classic", "dynamo"])
def test_shift_tokens_right_is_onnxruntimes_exactly(exporter: str) -> None:
    ids = _ids()
    like_onnxruntime_everywhere(shift_tokens_right(exporter), [ids])
    want = np.concatenate([[[START]], ids[:, :-1]], axis=1)
    want[want == -100] = PAD
    assert want[0, 5] == PAD and want[0, 0] == START


def test_rows_of_floats_scattered_into_run_time_data() -> None:
    """Rows 3 and 0 of relu(x) [4, 3, 2] replaced by rows of another run-time value, row -2
    (2) by a third."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Sigmoid", ["u"], ["s"]),
        helper.make_node("ScatterND", ["r", "rows", "s"], ["y"]),
    ]
    constants = {"rows": np.array([[3], [0], [-2]], np.int64)}
    inputs = {"x": (F, [4, 3, 2]), "u": (F, [3, 3, 2])}
    model = typed_model(nodes, inputs, {"y": (F, [4, 3, 2])}, constants)
    x, u = RNG.standard_normal((4, 3, 2)), RNG.standard_normal((3, 3, 2))
    like_onnxruntime_everywhere(model, [x.astype(np.float32), u.astype(np.float32)])


@pytest.mark.parametrize(
    ("rows", "spliced"),
    [
        (np.arange(1, 7), True),  # MViT: attn[:, :, 1:, 1:] += rel, all but the first row
        (np.arange(0, 4), True),  # the first rows
        (np.arange(2, 5), True),  # rows in the middle
        (np.arange(0, 7), True),  # every row
        (np.array([1, 3, 4]), False),  # not one run
        (np.array([2, 1]), False),  # not in order
    ],
)
def test_a_slice_assignment_is_a_concat(rows: np.ndarray, spliced: bool) -> None:
    """ScatterND of one run of rows, in order, at constant indices (the dynamo exporter's
    slice assignment, between the transposes that make its rows, the updates transposed
    alike): the data's rows around the run and the updates concatenated, no gather or where;
    sink-movement then takes the transposes below the slice and the concat, where they
    cancel. Other rows as before."""
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], perm=[2, 0, 1]),
        helper.make_node("Sigmoid", ["u"], ["s"]),
        helper.make_node("Transpose", ["s"], ["ts"], perm=[2, 0, 1]),
        helper.make_node("ScatterND", ["t", "rows", "ts"], ["w"]),
        helper.make_node("Transpose", ["w"], ["y"], perm=[1, 2, 0]),
    ]
    constants = {"rows": rows.reshape(-1, 1).astype(np.int64)}
    inputs = {"x": (F, [2, 3, 7]), "u": (F, [2, 3, len(rows)])}
    model = typed_model(nodes, inputs, {"y": (F, [2, 3, 7])}, constants)
    x, u = RNG.standard_normal((2, 3, 7)), RNG.standard_normal((2, 3, len(rows)))
    module = like_onnxruntime_everywhere(model, [x.astype(np.float32), u.astype(np.float32)])
    kinds = {op.name for op in module.walk()}
    assert ("nn.gather" not in kinds and "nn.where" not in kinds) == spliced, kinds
    assert ("nn.concat" in kinds) == (spliced and len(rows) < 7), kinds
    if spliced:
        compiled = compile_module(module, "ref", True, DEFAULT_PIPELINE)
        assert count_ops(compiled, nn.TransposeOp) == 0


def test_elements_of_floats_scattered_along_an_inner_axis() -> None:
    """ScatterElements on axis 1 of [2, 5, 3] with indices [2, 2, 3] (fewer than the data on
    axes 1 and 2), one negative."""
    nodes = [helper.make_node("ScatterElements", ["x", "where", "u"], ["y"], axis=1)]
    where = np.array([[[4, 0, 1], [2, -1, 3]], [[0, 0, 0], [1, 2, 4]]], np.int64)
    inputs = {"x": (F, [2, 5, 3]), "u": (F, [2, 2, 3])}
    model = typed_model(nodes, inputs, {"y": (F, [2, 5, 3])}, {"where": where})
    x, u = RNG.standard_normal((2, 5, 3)), RNG.standard_normal((2, 2, 3))
    like_onnxruntime_everywhere(model, [x.astype(np.float32), u.astype(np.float32)])


@pytest.mark.parametrize(
    ("node", "constants", "expected"),
    [
        (
            helper.make_node("ScatterND", ["x", "at", "u"], ["y"], name="s", reduction="sum"),
            {},
            "ScatterND with reduction 'sum' is not supported",
        ),
        (
            helper.make_node("ScatterND", ["x", "at", "u"], ["y"], name="s", reduction="or"),
            {"at": np.array([[1]], np.int64)},
            "ScatterND with reduction 'or' is not supported",
        ),
        (
            helper.make_node("ScatterElements", ["x", "at", "u"], ["y"], name="s", axis=0),
            {"at": np.array([[5, 0, 0]], np.int64)},
            "ScatterElements indices out of range for the axes [4]",
        ),
    ],
    ids=["unknown reduction at run-time indices", "unknown reduction", "out of range"],
)
def test_scatters_beyond_constant_indices_are_refused_in_one_line(
    tmp_path: Path, node: onnx.NodeProto, constants: dict, expected: str
) -> None:
    inputs = {"x": (F, [4, 3]), "u": (F, [1, 3])}
    if not constants:
        inputs["at"] = (I64, [1, 1])
    model = typed_model([node], inputs, {"y": (F, [4, 3])}, constants)
    done = tool_process("nnlayout-import", onnx_file(model)(tmp_path))
    assert_one_clean_error(done.returncode, done.stdout, done.stderr, expected)


def test_a_bool_mask_scattered_into() -> None:
    """An attention mask with columns 1 and 3 set false by ScatterElements of a run-time
    bool row: nn.where selects masks as it selects numbers."""
    nodes = [
        helper.make_node("Not", ["m"], ["n"]),
        helper.make_node("ScatterElements", ["n", "columns", "off"], ["y"], axis=1),
    ]
    constants = {"columns": np.array([[1, -2]], np.int64)}
    inputs = {"m": (TensorProto.BOOL, [2, 5]), "off": (TensorProto.BOOL, [1, 2])}
    model = typed_model(nodes, inputs, {"y": (TensorProto.BOOL, [2, 5])}, constants)
    mask = RNG.integers(0, 2, (2, 5)).astype(np.bool_)
    like_onnxruntime_everywhere(model, [mask, np.array([[False, True]])])


# ------------------------------------------------ a key/value cache written at run time
H, S, D = 2, 8, 4
CACHE = {"cache": (F, [1, H, S, D]), "k": (F, [1, H, 1, D]), "pos": (I64, [1])}


def kv_cache_write(form: str) -> onnx.ModelProto:
    """cache [1, H, S, D] with position `pos` of axis 2 replaced by k [1, H, 1, D], as:
    "dynamo" (both statements: axis 2 moved first, ScatterND of rows, moved back),
    "classic index_copy" (ScatterElements at the position expanded over k's shape) and
    "classic index_put" (ScatterND at the concatenated coordinates of every row)."""
    constants: dict[str, np.ndarray] = {}
    if form == "dynamo":
        constants["axes"] = np.array([1], np.int64)
        nodes = [
            helper.make_node("Unsqueeze", ["pos", "axes"], ["at"]),
            helper.make_node("Transpose", ["cache"], ["moved"], perm=[2, 0, 1, 3]),
            helper.make_node("Transpose", ["k"], ["rows"], perm=[2, 0, 1, 3]),
            helper.make_node("ScatterND", ["moved", "at", "rows"], ["written"]),
            helper.make_node("Transpose", ["written"], ["y"], perm=[1, 2, 0, 3]),
        ]
    elif form == "classic index_copy":
        constants |= {"one": np.ones(4, np.int64), "k_shape": np.array([1, H, 1, D], np.int64)}
        nodes = [
            helper.make_node("Reshape", ["pos", "one"], ["p"]),
            helper.make_node("Expand", ["p", "k_shape"], ["at"]),
            helper.make_node("ScatterElements", ["cache", "at", "k"], ["y"], axis=2),
        ]
    else:
        constants |= {
            "batch": np.zeros((1, H, 1, 1), np.int64),
            "head": np.arange(H, dtype=np.int64).reshape(1, H, 1, 1),
            "one": np.ones(4, np.int64),
            "rows": np.array([1, H, 1, 1], np.int64),
        }
        nodes = [
            helper.make_node("Reshape", ["pos", "one"], ["p"]),
            helper.make_node("Expand", ["p", "rows"], ["position"]),
            helper.make_node("Concat", ["batch", "head", "position"], ["at"], axis=-1),
            helper.make_node("ScatterND", ["cache", "at", "k"], ["y"], name="kv"),
        ]
    return typed_model(nodes, CACHE, {"y": (F, [1, H, S, D])}, constants)


FORMS = ["dynamo", "classic index_copy", "classic index_put"]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("position", [0, 5, S - 1, -1])
def test_a_kv_cache_written_at_a_run_time_position_is_onnxruntimes(
    form: str, position: int
) -> None:
    cache = RNG.standard_normal((1, H, S, D)).astype(np.float32)
    k = RNG.standard_normal((1, H, 1, D)).astype(np.float32)
    module = like_onnxruntime_everywhere(kv_cache_write(form), [cache, k, np.array([position])])
    assert sum(isinstance(op, nn.ScatterOp) for op in module.walk()) == 1


@pytest.mark.parametrize("form", FORMS)
def test_a_run_time_position_out_of_range_is_an_error_at_the_node(form: str) -> None:
    """S on an axis of S: each index is checked before it names a row or element (as a flat
    row, (0, 1, S) would be row 2 S of 2 S: in range)."""
    model = kv_cache_write(form)
    node = next(n for n in model.graph.node if n.op_type.startswith("Scatter"))
    module = import_model(model).module
    inputs = [np.zeros((1, H, S, D), np.float32), np.ones((1, H, 1, D), np.float32)]
    named = f"the indices of ONNX node '{node.name or node.output[0]}'"
    with pytest.raises(DiagnosticError, match=rf"index {S} at .* size {S} .*\({named}\)"):
        Interpreter(module).run([*inputs, np.array([S])])


def test_elements_scattered_at_run_time_indices() -> None:
    """ScatterElements on axis 0 of [4, 3] at indices [2, 3] given at run time (distinct
    in each column, as onnxruntime requires), one negative: flat elements."""
    nodes = [helper.make_node("ScatterElements", ["x", "at", "u"], ["y"], axis=0)]
    inputs = {"x": (F, [4, 3]), "at": (I64, [2, 3]), "u": (F, [2, 3])}
    model = typed_model(nodes, inputs, {"y": (F, [4, 3])}, {})
    at = np.array([[3, 0, -1], [1, 2, 0]], np.int64)
    x, u = RNG.standard_normal((4, 3)), RNG.standard_normal((2, 3))
    like_onnxruntime_everywhere(model, [x.astype(np.float32), at, u.astype(np.float32)])


@pytest.mark.parametrize("reduction", ["add", "mul", "max", "min"])
@pytest.mark.parametrize("known", [True, False], ids=["constant indices", "run-time indices"])
def test_scatter_nd_reductions_accumulate_repeated_rows(reduction: str, known: bool) -> None:
    """Rows 1, -3 (1 again) and 3 of [4, 3] combined with three update rows."""
    nodes = [helper.make_node("ScatterND", ["x", "at", "u"], ["y"], reduction=reduction)]
    at = np.array([[1], [-3], [3]], np.int64)
    inputs = {"x": (F, [4, 3]), "u": (F, [3, 3])} | ({} if known else {"at": (I64, [3, 1])})
    model = typed_model(nodes, inputs, {"y": (F, [4, 3])}, {"at": at} if known else {})
    x, u = RNG.standard_normal((4, 3)), RNG.standard_normal((3, 3))
    given = [x.astype(np.float32), u.astype(np.float32), *([] if known else [at])]
    module = like_onnxruntime_everywhere(model, given)
    assert sum(isinstance(op, nn.ScatterOp) for op in module.walk()) == 1


@pytest.mark.parametrize("reduction", ["add", "mul", "max", "min"])
@pytest.mark.parametrize("known", [True, False], ids=["constant indices", "run-time indices"])
def test_scatter_elements_reductions_on_int64(reduction: str, known: bool) -> None:
    """ScatterElements on axis 1 of int64 [2, 4] with repeated indices, exactly."""
    nodes = [
        helper.make_node("ScatterElements", ["x", "at", "u"], ["y"], axis=1, reduction=reduction)
    ]
    at = np.array([[0, 0, 3], [2, -2, 1]], np.int64)
    inputs = {"x": (I64, [2, 4]), "u": (I64, [2, 3])} | ({} if known else {"at": (I64, [2, 3])})
    model = typed_model(nodes, inputs, {"y": (I64, [2, 4])}, {"at": at} if known else {})
    x, u = RNG.integers(-9, 9, (2, 4)), RNG.integers(-9, 9, (2, 3))
    like_onnxruntime_everywhere(model, [x, u, *([] if known else [at])])


def test_elements_scattered_into_a_vector_at_run_time_indices() -> None:
    """Rank 1: the flat positions are the indices themselves (no other axis to add)."""
    nodes = [helper.make_node("ScatterElements", ["x", "at", "u"], ["y"], axis=0)]
    inputs = {"x": (F, [6]), "at": (I64, [3]), "u": (F, [3])}
    model = typed_model(nodes, inputs, {"y": (F, [6])}, {})
    x, u = RNG.standard_normal(6), RNG.standard_normal(3)
    at = np.array([4, -6, 2], np.int64)
    like_onnxruntime_everywhere(model, [x.astype(np.float32), at, u.astype(np.float32)])
