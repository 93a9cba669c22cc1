"""LSTM, GRU and RNN as torch's exporters write them, one `nn.lstm`, `nn.gru` or `nn.rnn` a
layer (frontends/onnx/recurrent.py), checked against onnxruntime on every target, padding on
and off: forward, reverse and bidirectional, layout 0 and 1, initial states given (graph
inputs) and absent, GRU's linear_before_reset 0 and 1, RNN's Tanh and Relu, clip, every
output read or some left out, hidden sizes (5, 7) that pad in every blocked layout; and the
refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnlayout.diagnostics import UserError
from nnlayout.frontends.onnx import import_model
from nnlayout.tests.helpers import check_against_onnxruntime

RNG = np.random.default_rng(53)
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
STEPS, BATCH, INPUT = 6, 2, 4


def recurrent_model(
    op_type: str,
    hidden: int = 5,
    direction: str = "forward",
    layout: int = 0,
    initial: bool = False,
    outputs: tuple[int, ...] = (0, 1),
    **attrs: object,
) -> onnx.ModelProto:
    """x -> op_type (W, R, B constant; initial_h and initial_c graph inputs where `initial`)
    -> the outputs listed (Y, Y_h, Y_c)."""
    dirs = 2 if direction == "bidirectional" else 1
    gates = GATES[op_type]
    inits = {
        "w": RNG.standard_normal((dirs, gates * hidden, INPUT)) / 2,
        "r": RNG.standard_normal((dirs, gates * hidden, hidden)) / 2,
        "b": RNG.standard_normal((dirs, 2 * gates * hidden)) / 2,
    }
    x_shape = [BATCH, STEPS, INPUT] if layout else [STEPS, BATCH, INPUT]
    state_shape = [BATCH, dirs, hidden] if layout else [dirs, BATCH, hidden]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)]
    names = ["x", "w", "r", "b", ""]
    if initial:
        names.append("h0")
        inputs.append(helper.make_tensor_value_info("h0", TensorProto.FLOAT, state_shape))
        if op_type == "LSTM":
            names.append("c0")
            inputs.append(helper.make_tensor_value_info("c0", TensorProto.FLOAT, state_shape))
    out_names = [f"y{i}" if i in outputs else "" for i in range(3 if op_type == "LSTM" else 2)]
    node = helper.make_node(
        op_type, names, out_names, hidden_size=hidden, direction=direction, layout=layout, **attrs
    )
    graph = helper.make_graph(
        [node],
        "recurrent",
        inputs,
        [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None) for i in outputs],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in inits.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("op_type", ["LSTM", "GRU", "RNN"])
def test_directions(op_type: str, direction: str, tmp_path: Path) -> None:
    model = recurrent_model(op_type, direction=direction, initial=True)
    check_against_onnxruntime(model, tmp_path)


@pytest.mark.parametrize("op_type", ["LSTM", "GRU", "RNN"])
def test_batch_first_without_initial_state(op_type: str, tmp_path: Path) -> None:
    """torch's batch_first as layout=1, hidden size 7, every output read."""
    outputs = (0, 1, 2) if op_type == "LSTM" else (0, 1)
    model = recurrent_model(op_type, 7, "bidirectional", layout=1, outputs=outputs)
    check_against_onnxruntime(model, tmp_path, reference=_sequence_first(model))


def _sequence_first(model: onnx.ModelProto) -> onnx.ModelProto:
    """A layout=1 model as layout 0 between transposes (onnxruntime runs layout 0 only)."""
    reference = onnx.ModelProto.FromString(model.SerializeToString())
    node = reference.graph.node[0]
    next(a for a in node.attribute if a.name == "layout").i = 0
    node.input[0] = "x_t"
    outputs = list(node.output)
    node.output[:] = [f"{o}_t" if o else "" for o in outputs]
    perms = ([2, 0, 1, 3], [1, 0, 2], [1, 0, 2])
    nodes = [helper.make_node("Transpose", ["x"], ["x_t"], perm=[1, 0, 2]), node]
    nodes += [
        helper.make_node("Transpose", [f"{o}_t"], [o], perm=perms[i])
        for i, o in enumerate(outputs)
        if o
    ]
    del reference.graph.node[:]
    reference.graph.node.extend(nodes)
    return reference


@pytest.mark.parametrize("linear_before_reset", [0, 1])
def test_gru_linear_before_reset(linear_before_reset: int, tmp_path: Path) -> None:
    """torch writes 1: the reset gate multiplies the recurrent product with its bias."""
    for initial in (False, True):
        model = recurrent_model(
            "GRU", initial=initial, linear_before_reset=linear_before_reset, outputs=(0,)
        )
        check_against_onnxruntime(model, tmp_path)


def test_rnn_relu_and_lstm_clip(tmp_path: Path) -> None:
    check_against_onnxruntime(recurrent_model("RNN", activations=["Relu"], outputs=(1,)), tmp_path)
    check_against_onnxruntime(recurrent_model("LSTM", clip=0.6, initial=True), tmp_path)


@pytest.mark.parametrize(
    ("attrs", "extra", "message"),
    [
        (
            {"activations": ["Tanh", "Tanh", "Tanh"]},
            {},
            "LSTM activations ['Tanh', 'Tanh', 'Tanh']",
        ),
        ({"input_forget": 1}, {}, "LSTM input_forget=1"),
        ({}, {"lens": np.array([6, 3], np.int32)}, "sequence_lens [6, 3] shorter than the 6 steps"),
    ],
)
def test_refusals_name_the_node(attrs: dict, extra: dict, message: str) -> None:
    model = recurrent_model("LSTM", **attrs)
    node = model.graph.node[0]
    node.name = "encoder"
    if extra:
        node.input[4] = "lens"
        model.graph.initializer.append(numpy_helper.from_array(extra["lens"], "lens"))
    with pytest.raises(UserError) as error:
        import_model(model)
    assert "'encoder'" in str(error.value) and message in str(error.value), error.value


def test_two_layer_bidirectional_stack_as_the_classic_exporter_writes_it(tmp_path: Path) -> None:
    """torch's nn.LSTM(4, 5, num_layers=2, bidirectional=True, batch_first=True) at opset
    17: Transpose to sequence-first, each layer's zero initial states as constants, its Y
    [steps, 2, batch, 5] transposed to [steps, batch, 2, 5] and reshaped to [steps, batch,
    10] for the next layer, the last one's transposed back to batch-first."""
    hidden, inits = 5, {}
    nodes = [helper.make_node("Transpose", ["x"], ["x0"], perm=[1, 0, 2])]
    source, size = "x0", INPUT
    for layer in range(2):
        inits[f"w{layer}"] = RNG.standard_normal((2, 4 * hidden, size)) / 2
        inits[f"r{layer}"] = RNG.standard_normal((2, 4 * hidden, hidden)) / 2
        inits[f"b{layer}"] = RNG.standard_normal((2, 8 * hidden)) / 2
        inits[f"zeros{layer}"] = np.zeros((2, BATCH, hidden))
        inits[f"shape{layer}"] = np.array([STEPS, BATCH, 2 * hidden])
        nodes += [
            helper.make_node(
                "LSTM",
                [
                    source,
                    f"w{layer}",
                    f"r{layer}",
                    f"b{layer}",
                    "",
                    f"zeros{layer}",
                    f"zeros{layer}",
                ],
                [f"y{layer}", f"h{layer}", f"c{layer}"],
                hidden_size=hidden,
                direction="bidirectional",
            ),
            helper.make_node("Transpose", [f"y{layer}"], [f"t{layer}"], perm=[0, 2, 1, 3]),
            helper.make_node("Reshape", [f"t{layer}", f"shape{layer}"], [f"s{layer}"]),
        ]
        source, size = f"s{layer}", 2 * hidden
    nodes.append(helper.make_node("Transpose", [source], ["y"], perm=[1, 0, 2]))
    graph = helper.make_graph(
        nodes,
        "stack",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, STEPS, INPUT])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [
            numpy_helper.from_array(v.astype(np.int64 if k.startswith("shape") else np.float32), k)
            for k, v in inits.items()
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    check_against_onnxruntime(model, tmp_path)


@pytest.mark.parametrize("op_type", ["GRU", "RNN"])
def test_only_an_lstm_has_an_initial_cell_state(op_type: str) -> None:
    """A GRU or RNN without initial states gets a zero h0 and no c0 (no unused constant in
    the weights file)."""
    imported = import_model(recurrent_model(op_type, outputs=(0,)), inline_limit=0)
    names = [n for n in imported.weights if n.endswith((".h0", ".c0"))]
    assert names == ["y0.h0"], names
