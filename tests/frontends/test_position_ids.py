"""Index arithmetic at run time: RoBERTa's position ids, computed from its token ids as both of
torch's exporters write them (ids != padding_idx, made int32, CumSum along the sequence, times
the mask, made int64, plus padding_idx), its token types gathered from a buffer at those
positions (GatherElements), CumSum of floats, and int32 products that wrap. Each against
onnxruntime on every target, padding on and off, interpreter and generated module (integers
bit for bit); what stays refused is refused in one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from nnlayout.dialects import nn
from nnlayout.tests.helpers import (
    assert_one_clean_error,
    like_onnxruntime_everywhere,
    onnx_file,
    tool_process,
    typed_model,
)

V, T, D, PAD = 40, 10, 8, 1  # vocabulary, sequence length, width, RoBERTa's padding_idx
I32, I64 = TensorProto.INT32, TensorProto.INT64


def _ids() -> np.ndarray:
    """Token ids with padding tokens inside and at the end: their position is PAD."""
    ids = np.random.default_rng(5).integers(2, V, (1, T), dtype=np.int64)
    ids[0, 3] = PAD
    ids[0, 7:] = PAD
    return ids


def position_id_nodes(exporter: str) -> list[onnx.NodeProto]:
    """ids -> positions, as `exporter` writes transformers' create_position_ids_from_input_ids:
    classic `Cast(Not(Equal)) to int32 -> CumSum -> Mul`, dynamo through int64 and back."""
    nodes = [
        helper.make_node("Equal", ["ids", "pad"], ["is_pad"]),
        helper.make_node("Not", ["is_pad"], ["real"]),
    ]
    if exporter == "classic":
        nodes += [
            helper.make_node("Cast", ["real"], ["mask"], to=I32),
            helper.make_node("CumSum", ["mask", "axis32"], ["count"]),
        ]
    else:
        nodes += [
            helper.make_node("Cast", ["real"], ["mask64"], to=I64),
            helper.make_node("Cast", ["mask64"], ["mask"], to=I32),
            helper.make_node("CumSum", ["mask", "axis"], ["count64"], exclusive=0, reverse=0),
            helper.make_node("Cast", ["count64"], ["count"], to=I32),
        ]
    return [
        *nodes,
        helper.make_node("Mul", ["count", "mask"], ["counted"]),
        helper.make_node("Cast", ["counted"], ["counted64"], to=I64),
        helper.make_node("Add", ["counted64", "pad"], ["positions"]),
    ]


INDEX_CONSTANTS = {
    "pad": np.array(PAD, np.int64),
    "axis": np.array(1, np.int64),
    "axis32": np.array(1, np.int32),
}


@pytest.mark.parametrize("exporter", ["classic", "dynamo"])
def test_position_ids_are_onnxruntimes_exactly(exporter: str) -> None:
    model = typed_model(
        position_id_nodes(exporter),
        {"ids": (I64, [1, T])},
        {"positions": (I64, [1, T])},
        INDEX_CONSTANTS,
    )
    ids = _ids()
    module = like_onnxruntime_everywhere(model, [ids])
    assert any(isinstance(op, nn.CumSumOp) for op in module.walk())
    # the positions count the real tokens from PAD + 1; padding tokens sit at PAD
    real = ids != PAD
    want = np.where(real, np.cumsum(real, axis=1) + PAD, PAD)
    assert want.tolist()[0] == [2, 3, 4, 1, 5, 6, 7, 1, 1, 1]


def roberta_embeddings(exporter: str) -> onnx.ModelProto:
    """x = wte[ids] + wpe[positions] + types_table[buffered_types[positions]]: RoBERTa called
    without token type ids, which gathers them from its [1, max_positions] buffer at the
    computed positions (GatherElements on axis 1)."""
    rng = np.random.default_rng(6)
    constants = {
        **INDEX_CONSTANTS,
        "wte": rng.standard_normal((V, D)).astype(np.float32),
        "wpe": rng.standard_normal((T + PAD + 1, D)).astype(np.float32),
        "types_table": rng.standard_normal((2, D)).astype(np.float32),
        "buffered_types": (np.arange(T + PAD + 1, dtype=np.int64) % 2)[None],
    }
    nodes = [
        *position_id_nodes(exporter),
        helper.make_node("Gather", ["wte", "ids"], ["tokens"]),
        helper.make_node("Gather", ["wpe", "positions"], ["where"]),
        helper.make_node("GatherElements", ["buffered_types", "positions"], ["types"], axis=1),
        helper.make_node("Gather", ["types_table", "types"], ["kinds"]),
        helper.make_node("Add", ["tokens", "where"], ["sum"]),
        helper.make_node("Add", ["sum", "kinds"], ["x"]),
    ]
    return typed_model(
        nodes, {"ids": (I64, [1, T])}, {"x": (TensorProto.FLOAT, [1, T, D])}, constants
    )


@pytest.mark.parametrize("exporter", ["classic", "dynamo"])
def test_robertas_embeddings_run_like_onnxruntime(exporter: str) -> None:
    module = like_onnxruntime_everywhere(roberta_embeddings(exporter), [_ids()])
    assert sum(isinstance(op, nn.GatherOp) for op in module.walk()) == 4


@pytest.mark.parametrize(
    ("axis", "exclusive", "reverse"),
    [(1, 0, 0), (1, 1, 0), (-3, 0, 1), (3, 1, 1)],
)
def test_cumsum_of_floats_runs_like_onnxruntime(axis: int, exclusive: int, reverse: int) -> None:
    """Over the 20 channels of a convolution's result (padded to 32 in a blocked layout: the
    padding lanes must not join the sums), or over its width."""
    rng = np.random.default_rng(7)
    constants = {
        "w": (rng.standard_normal((20, 3, 3, 3)) * 0.3).astype(np.float32),
        "axis": np.array(axis, np.int64),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["c"], ["s"]),  # sigmoid(0) = 0.5 in any padding lane
        helper.make_node("CumSum", ["s", "axis"], ["y"], exclusive=exclusive, reverse=reverse),
    ]
    model = typed_model(
        nodes,
        {"x": (TensorProto.FLOAT, [1, 3, 5, 6])},
        {"y": (TensorProto.FLOAT, [1, 20, 5, 6])},
        constants,
    )
    like_onnxruntime_everywhere(model, [rng.standard_normal((1, 3, 5, 6)).astype(np.float32)])


def test_int32_products_wrap_as_onnxruntimes() -> None:
    """ids as int32 times 2^30, summed along the sequence: past 2^31 both wrap."""
    nodes = [
        helper.make_node("Cast", ["ids"], ["i"], to=I32),
        helper.make_node("Mul", ["i", "big"], ["p"]),
        helper.make_node("CumSum", ["p", "axis"], ["s"]),
        helper.make_node("Sub", ["s", "i"], ["d"]),
        helper.make_node("Cast", ["d"], ["y"], to=I64),
    ]
    constants = {"big": np.array(1 << 30, np.int32), "axis": np.array(1, np.int64)}
    model = typed_model(nodes, {"ids": (I64, [1, T])}, {"y": (I64, [1, T])}, constants)
    ids = _ids()
    like_onnxruntime_everywhere(model, [ids])
    assert ((ids.astype(np.int64) << 30).cumsum() > 2**31).any()  # it does wrap


@pytest.mark.parametrize("integers", [I64, I32])
def test_positions_clamped_by_integer_max_and_min(integers: int) -> None:
    """Positions (ids - 20, as int32 or int64) clamped to 0..T-1 by Max and Min (a cache's
    bounds), then read from a table: exactly onnxruntime's."""
    numbers = np.int64 if integers == I64 else np.int32
    nodes = [
        helper.make_node("Cast", ["ids"], ["i"], to=integers),
        helper.make_node("Sub", ["i", "shift"], ["p"]),
        helper.make_node("Max", ["p", "zero"], ["low"]),
        helper.make_node("Min", ["low", "last"], ["clamped"]),
        helper.make_node("Gather", ["table", "clamped"], ["y"], axis=0),
    ]
    constants = {
        "shift": np.array(20, numbers),
        "zero": np.array(0, numbers),
        "last": np.array(T - 1, numbers),
        "table": np.arange(T * 3, dtype=np.float32).reshape(T, 3),
    }
    model = typed_model(
        nodes, {"ids": (I64, [1, T])}, {"y": (TensorProto.FLOAT, [1, T, 3])}, constants
    )
    ids = _ids()
    ids[0, 0], ids[0, 1] = 0, 10**6  # one below 0 and one past the end after the shift
    like_onnxruntime_everywhere(model, [ids])


@pytest.mark.parametrize(
    ("node", "inputs", "constants", "expected"),
    [
        (
            helper.make_node("GatherElements", ["table", "ids"], ["y"], axis=1),
            {"table": (I64, [1, 50])},
            {"ids": np.array([[*range(T - 1), 50]], np.int64)},
            "GatherElements indices out of range for the axes [50]",
        ),
        (
            helper.make_node("CumSum", ["x", "axis"], ["y"], reverse=2),
            {"x": (I64, [2, T])},
            {"axis": np.array(1, np.int64)},
            "CumSum's 'reverse' must be 0 or 1, got 2",
        ),
    ],
    ids=["constant indices out of range", "reverse 2"],
)
def test_what_stays_unsupported_is_refused_in_one_line(
    tmp_path: Path, node: onnx.NodeProto, inputs: dict, constants: dict, expected: str
) -> None:
    rows = 1 if "table" in inputs else 2
    model = typed_model([node], inputs, {"y": (I64, [rows, T])}, constants)
    done = tool_process("nnlayout-import", onnx_file(model)(tmp_path))
    assert_one_clean_error(done.returncode, done.stdout, done.stderr, expected)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_elements_of_a_full_tensor_at_run_time_indices(axis: int) -> None:
    """Data [3, 5, 4] read at run-time indices [2, 4, 3] (smaller than the data on the other
    axes, some negative): each element at its flat position, as onnxruntime reads it."""
    size = (3, 5, 4)[axis]
    nodes = [helper.make_node("GatherElements", ["x", "at"], ["y"], axis=axis)]
    inputs = {"x": (TensorProto.FLOAT, [3, 5, 4]), "at": (I64, [2, 4, 3])}
    model = typed_model(nodes, inputs, {"y": (TensorProto.FLOAT, [2, 4, 3])}, {})
    rng = np.random.default_rng(axis + 5)
    at = rng.integers(-size, size, (2, 4, 3))
    like_onnxruntime_everywhere(model, [rng.standard_normal((3, 5, 4)).astype(np.float32), at])
