"""oneDNN's RNN primitive as the kernel of `nn.lstm`, `nn.gru` and `nn.rnn`
(kernels/onednn/recurrent.py) against the reference kernel: every cell and direction, GRU's
linear_before_reset, RNN's relu, the last cell state; NaN, infinities and overflow, which
run the reference; weights given at run time; clip, which oneDNN refuses. The exporters'
patterns against onnxruntime on every target are in tests/frontends/test_recurrent.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import TensorType, f32
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.frontends.onnx import import_model
from nnlayout.kernels.onednn.recurrent import PreparedRecurrent, recurrent_workspace
from nnlayout.kernels.reference_recurrent import recurrent as reference
from nnlayout.kernels.targets import get_target
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    assert_same,
    check_against_onnxruntime,
    compile_module,
)

pytestmark = pytest.mark.onednn

STEPS, BATCH, INPUT, HIDDEN = 5, 3, 4, 6
RNG = np.random.default_rng(7)


def layer(
    kind: type[nn.RecurrentOp], direction: str = "forward", **attributes: object
) -> nn.RecurrentOp:
    """An op of `kind` on values of no program (its kernel converts the weights each call)."""
    d = 2 if direction == "bidirectional" else 1
    rows = kind.GATES * HIDDEN
    shapes = [(STEPS, BATCH, INPUT), (d, rows, INPUT), (d, rows, HIDDEN), (d, 2 * rows)]
    shapes += [(d, BATCH, HIDDEN)] * (2 if kind is nn.LstmOp else 1)
    values = [create_ssa_value(TensorType(f32, s)) for s in shapes]
    return kind(values, direction, **attributes)  # type: ignore[arg-type]


def operands(op: nn.RecurrentOp, scale: float = 0.5) -> list[np.ndarray]:
    return [(RNG.standard_normal(nn.shape_of(v)) * scale).astype(np.float32) for v in op.operands]


def run(op: nn.RecurrentOp, inputs: list[np.ndarray]) -> np.ndarray:
    out = np.full(nn.shape_of(op.output), np.nan, np.float32)
    PreparedRecurrent(op)(inputs, out)
    return out


CASES = [
    (nn.LstmOp, "forward", {}),
    (nn.LstmOp, "reverse", {}),
    (nn.LstmOp, "bidirectional", {}),
    (nn.LstmOp, "bidirectional", {"last_cell": True}),
    (nn.LstmOp, "reverse", {"last_cell": True}),
    (nn.GruOp, "forward", {}),
    (nn.GruOp, "bidirectional", {"linear_before_reset": True}),
    (nn.GruOp, "reverse", {"linear_before_reset": True}),
    (nn.RnnOp, "bidirectional", {}),
    (nn.RnnOp, "reverse", {"activation": "relu"}),
]


@pytest.mark.parametrize(("kind", "direction", "attributes"), CASES)
def test_the_primitive_computes_the_reference(
    kind: type[nn.RecurrentOp], direction: str, attributes: dict
) -> None:
    op = layer(kind, direction, **attributes)
    inputs = operands(op)
    want = reference(op, inputs)
    got = run(op, inputs)
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-6 * max(1.0, np.abs(want).max()))
    workspace = recurrent_workspace(op, get_target("onednn"))
    assert workspace >= PreparedRecurrent(op).scratchpad.nbytes > 0


@pytest.mark.parametrize(("kind", "direction", "attributes"), CASES[::3])
def test_non_finite_operands_run_the_reference(
    kind: type[nn.RecurrentOp], direction: str, attributes: dict
) -> None:
    """oneDNN's eltwise code is exact on finite values only: a NaN or an infinity in the
    sequence or a state, or in the weights, makes the call run the reference."""
    op = layer(kind, direction, **attributes)
    kernel = PreparedRecurrent(op)
    for index, value in ((0, np.nan), (0, np.inf), (4, -np.inf), (4, np.nan), (2, np.nan)):
        inputs = operands(op)
        inputs[index].reshape(-1)[3] = value
        assert not kernel._safe(kernel._norms(inputs, {})), (index, value)
        np.testing.assert_array_equal(run(op, inputs), reference(op, inputs))


def test_an_overflowing_relu_rnn_runs_the_reference() -> None:
    """Weights of 1e30 make a relu RNN's float32 states overflow from the second step: the
    result is the reference's (float64, then rounded: inf where it overflows)."""
    op = layer(nn.RnnOp, "forward", activation="relu")
    inputs = operands(op)
    inputs[1][...] = 1e30
    inputs[2][...] = 1e30
    want = reference(op, inputs)
    assert np.isinf(want).any()
    np.testing.assert_array_equal(run(op, inputs), want)


def test_cancelling_products_that_overflow_float32_run_the_reference() -> None:
    """x W^T of (1e18, 1e18) with a row (1e21, -1e21): in float32 inf - inf, NaN; in the
    reference's float64 exactly 0. The operands are finite (their squares' sums too), so the
    primitive runs; its NaN result is caught and the reference's taken."""
    op = layer(nn.RnnOp, "forward")
    inputs = operands(op)
    inputs[0][:, :, :2] = 1e18
    inputs[1][:, :, 0], inputs[1][:, :, 1] = 1e21, -1e21
    want = reference(op, inputs)
    assert np.isfinite(want).all()
    np.testing.assert_array_equal(run(op, inputs), want)


def test_a_call_bound_to_its_buffers_checks_its_operands() -> None:
    """Batch first (layout 1): the LSTM reads the transposed sequence, an arena buffer, so
    the generated module binds it to its buffers once (`on`). Products that cancel in
    float64 and overflow float32 (as above), and then a NaN, still give the reference's
    result; then ordinary values, oneDNN's."""
    weights = {"w": np.zeros((1, 4 * HIDDEN, INPUT), np.float32)}
    weights["w"][:, :, 0], weights["w"][:, :, 1] = 1e21, -1e21
    module = import_model(_lstm_model(layout=1, **weights), inline_limit=1 << 20).module
    compiled = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    x = RNG.standard_normal((BATCH, STEPS, INPUT)).astype(np.float32)
    x[:, :, :2] = 1e18
    want = Interpreter(module).run([x])
    assert np.isfinite(want[0]).all()
    assert_same(want, run_generated(compiled, [x]))
    x[1, 2, 3] = np.nan
    assert_same(Interpreter(module).run([x]), run_generated(compiled, [x]))
    x[...] = RNG.standard_normal(x.shape)
    assert_same(Interpreter(module).run([x]), run_generated(compiled, [x]))


def _lstm_model(
    clip: float | None = None,
    runtime_weights: bool = False,
    layout: int = 0,
    **given: np.ndarray,
) -> onnx.ModelProto:
    """x -> LSTM -> Y; weights random but those `given`."""
    shapes = {"w": (1, 4 * HIDDEN, INPUT), "r": (1, 4 * HIDDEN, HIDDEN), "b": (1, 8 * HIDDEN)}
    weights = {k: (RNG.standard_normal(s) / 2).astype(np.float32) for k, s in shapes.items()}
    weights |= given
    x_shape = [BATCH, STEPS, INPUT] if layout else [STEPS, BATCH, INPUT]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)]
    if runtime_weights:
        inputs.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, shapes["w"]))
        del weights["w"]
    extra: dict[str, object] = {"layout": layout} if layout else {}
    if clip is not None:
        extra["clip"] = clip
    node = helper.make_node("LSTM", ["x", "w", "r", "b"], ["y"], hidden_size=HIDDEN, **extra)
    graph = helper.make_graph(
        [node],
        "lstm",
        inputs,
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in weights.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_one_op_per_layer_and_onednn_runs_it() -> None:
    module = import_model(_lstm_model()).module
    assert sum(op.name == "nn.lstm" for op in module.walk()) == 1
    chosen = {
        target: [
            kernel_of(op).kernel_name.data
            for op in compile_module(module, target, padding=True).walk()
            if op.name == "nn.lstm"
        ]
        for target in ("onednn", "host", "avx2", "ref")
    }
    assert chosen == {
        "onednn": ["lstm_onednn"],
        "host": ["lstm_onednn"],
        "avx2": ["lstm_ref"],
        "ref": ["lstm_ref"],
    }


def test_clip_is_left_to_the_reference_with_a_reason(capsys: pytest.CaptureFixture[str]) -> None:
    module = import_model(_lstm_model(clip=0.7)).module
    compiled = compile_module(
        module, "onednn", True, "select-dispatch{{target={target} padding={padding} remarks=true}}"
    )
    (op,) = [op for op in compiled.walk() if op.name == "nn.lstm"]
    assert kernel_of(op).kernel_name.data == "lstm_ref"
    assert "clip (oneDNN's RNN primitive has no gate clipping)" in capsys.readouterr().err


def test_weights_given_at_run_time(tmp_path: Path) -> None:
    """W a graph input: the oneDNN kernel converts it on each call."""
    check_against_onnxruntime(_lstm_model(runtime_weights=True), tmp_path)


@pytest.mark.parametrize(("kind", "direction", "attributes"), CASES[2:4] + CASES[6:7])
def test_a_bound_call_keeps_its_arrays_when_the_kernel_runs_others(
    kind: type[nn.RecurrentOp], direction: str, attributes: dict
) -> None:
    """`on(A)` binds memory objects of its own: calls of the same kernel on other arrays in
    between (as an interpreter of the same program may make) do not re-point them."""
    op = layer(kind, direction, **attributes)
    kernel = PreparedRecurrent(op)
    kernel.constant, kernel.constant_weights = [1, 2, 3], True  # as inside a program
    a = operands(op)
    b = [v.copy() for v in a]
    b[0], b[4] = operands(op)[0], operands(op)[4]
    out_a, out_b = (np.empty(nn.shape_of(op.output), np.float32) for _ in range(2))
    call_a = kernel.on(a, out_a)
    kernel(b, out_b)
    call_a()
    np.testing.assert_allclose(out_a, reference(op, a), atol=2e-6)
    np.testing.assert_allclose(out_b, reference(op, b), atol=2e-6)


def test_a_long_relu_rnn_runs_onednn(monkeypatch: pytest.MonkeyPatch) -> None:
    """A relu RNN's states have no bound before the call; after it, the states it computed
    bound every gate: 200 steps of torch's initialisation run oneDNN, not the reference."""
    import nnlayout.kernels.onednn.recurrent as kernel_module

    calls = []
    monkeypatch.setattr(kernel_module, "reference", lambda *a: calls.append(1) or reference(*a))
    d, hidden, size = 1, 64, 8
    values = [create_ssa_value(TensorType(f32, s)) for s in [(200, 2, size), (d, hidden, size)]]
    values += [create_ssa_value(TensorType(f32, s)) for s in [(d, hidden, hidden), (d, 2 * hidden)]]
    values.append(create_ssa_value(TensorType(f32, (d, 2, hidden))))
    op = nn.RnnOp(values, "forward", activation="relu")
    bound = 1 / np.sqrt(hidden)  # torch's nn.RNN initialisation
    inputs = [RNG.uniform(-bound, bound, nn.shape_of(v)).astype(np.float32) for v in values]
    inputs[0] = RNG.standard_normal(nn.shape_of(values[0])).astype(np.float32)
    got = run(op, inputs)
    assert calls == []
    np.testing.assert_allclose(got, reference(op, inputs), atol=2e-5)


def test_weights_given_at_run_time_reuse_their_reorders() -> None:
    """W, R and B operands of no constant: converted on each call, by reorders made once."""
    from nnlayout.kernels.onednn.primitives import CREATED

    op = layer(nn.LstmOp, "bidirectional")
    kernel = PreparedRecurrent(op)
    out = np.empty(nn.shape_of(op.output), np.float32)
    kernel(operands(op), out)
    made = CREATED.count
    for _ in range(3):
        inputs = operands(op)
        kernel(inputs, out)
        np.testing.assert_allclose(out, reference(op, inputs), atol=2e-6)
    assert CREATED.count == made


def test_a_relu_rnn_whose_states_overflow_float32_products_runs_the_reference() -> None:
    """x W^T of 5e17 x 1e19 makes states of 5e36 (the operands pass the check before the
    call); times a recurrent weight of +-100 they are +-5e38: in float32 inf - inf, NaN, which
    a relu may turn into 0; in the reference's float64 exactly 0. The states the call
    computed fail the check after it, and the reference's result is taken."""
    values = [create_ssa_value(TensorType(f32, s)) for s in [(3, 1, 1), (1, 2, 1), (1, 2, 2)]]
    values += [create_ssa_value(TensorType(f32, s)) for s in [(1, 4), (1, 1, 2)]]
    op = nn.RnnOp(values, "forward", activation="relu")
    inputs = [
        np.full((3, 1, 1), 5e17, np.float32),
        np.full((1, 2, 1), 1e19, np.float32),
        np.array([[[100, -100], [100, -100]]], np.float32),
        np.zeros((1, 4), np.float32),
        np.zeros((1, 1, 2), np.float32),
    ]
    want = reference(op, inputs)
    np.testing.assert_array_equal(want, np.full((3, 1, 1, 2), np.float32(5e36)))
    kernel = PreparedRecurrent(op)
    assert kernel._safe(kernel._norms(inputs, {}))
    np.testing.assert_array_equal(run(op, inputs), want)
