"""Converters of ONNX's recurrent layers, LSTM, GRU and RNN (torch's `nn.LSTM`, `nn.GRU`,
`nn.RNN`), each as one `nn.lstm`, `nn.gru` or `nn.rnn` (dialects/nn/recurrent.py) over the
whole sequence, which a kernel runs in one call (oneDNN's RNN primitive) rather than the
steps' small ops one by one.

The op takes W, R and B as ONNX stores them (B zeros where absent), the initial states as
[directions, batch, hidden] (zeros where absent) and gives every step's hidden state as
[steps, batch, directions, hidden]: Y is its transpose, Y_h its last step of each direction
(the first, for the reverse one), and Y_c a second `nn.lstm` that returns the last cell state
(`last_cell`), made only where Y_c is read (the exporters name every output, read or not).
ONNX's layout 1 (batch first) transposes x on the way in and the outputs on the way out.
Refused, naming what is missing: sequence_lens other
than every sequence at full length, activations other than the defaults (and, for RNN,
Relu), activation_alpha/beta, LSTM's input_forget and peepholes.

    %y = "LSTM"(%x, %w, %r, %b) (Y, Y_h read)  ->  %all = nn.lstm %x, %w, %r, %b, %h0, %c0
                                                   %y = nn.transpose %all [0, 2, 1, 3]
                                                   %h = nn.slice %all (last step), reshape
"""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.ir import SSAValue

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.common import text_attribute
from nnlayout.frontends.onnx.state import ImportState

#: Gates per layer, and the default activations ONNX names for each.
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
DEFAULT_ACTIVATIONS = {
    "LSTM": ("Sigmoid", "Tanh", "Tanh"),
    "GRU": ("Sigmoid", "Tanh"),
    "RNN": ("Tanh",),
}


def _attributes(state: ImportState, node: onnx.NodeProto, attrs: dict) -> str:
    """RNN's activation (Tanh or Relu); refuses what the ops do not compute."""
    given = [a.decode() if isinstance(a, bytes) else str(a) for a in attrs.get("activations", [])]
    directions = (
        2 if attrs.get("direction", b"forward") in (b"bidirectional", "bidirectional") else 1
    )
    defaults = list(DEFAULT_ACTIVATIONS[node.op_type]) * directions
    allowed = [defaults]
    if node.op_type == "RNN":
        allowed.append(["Relu"] * directions)
    if given and given not in allowed:
        raise state.fail(
            f"{node.op_type} activations {given} are not supported (the defaults "
            f"{defaults} are{', or Relu' if node.op_type == 'RNN' else ''})"
        )
    if attrs.get("activation_alpha") or attrs.get("activation_beta"):
        raise state.fail(f"{node.op_type} activation_alpha/activation_beta are not supported")
    if int(attrs.get("input_forget", 0)):
        raise state.fail("LSTM input_forget=1 (coupled input and forget gates) is not supported")
    if node.op_type == "LSTM" and len(node.input) > 7 and node.input[7]:
        raise state.fail("LSTM peepholes (input P) are not supported")
    return given[0] if given else "Tanh"


def _sequence_lengths(state: ImportState, node: onnx.NodeProto, steps: int, batch: int) -> None:
    """Refuses sequence_lens unless every sequence has the full length."""
    if len(node.input) <= 4 or not node.input[4]:
        return
    lengths = state.constant_array(node.input[4], f"{node.op_type}'s sequence_lens").ravel()
    if lengths.size != batch or np.any(lengths != steps):
        raise state.fail(
            f"{node.op_type} sequence_lens {lengths.tolist()} shorter than the {steps} steps "
            "are not supported (only every sequence at full length)"
        )


def recurrent(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    activation = _attributes(state, node, attrs)
    direction = text_attribute(attrs, "direction", "forward")
    if direction not in nn.recurrent.DIRECTIONS:
        raise state.fail(f"{node.op_type} direction '{direction}' is not one of ONNX's")
    x = state.operand(node, 0)
    layout = int(attrs.get("layout", 0))
    if len(nn.shape_of(x)) != 3:
        raise state.fail(f"{node.op_type} input of rank {len(nn.shape_of(x))}; ONNX's has rank 3")
    if layout:
        x = state.emit(state.build(lambda: nn.TransposeOp(x, [1, 0, 2])))
    steps, batch, _ = nn.shape_of(x)
    _sequence_lengths(state, node, steps, batch)
    hidden = int(attrs.get("hidden_size", 0))
    if hidden < 1:
        raise state.fail(f"{node.op_type} hidden_size {hidden} must be positive")
    directions = 2 if direction == "bidirectional" else 1
    w, r = state.operand(node, 1), state.operand(node, 2)
    b = state.optional_operand(node, 3)
    if b is None:
        b = _zeros(state, node, "b", [directions, 2 * GATES[node.op_type] * hidden])
    indices = (5, 6) if node.op_type == "LSTM" else (5,)  # initial_h, initial_c
    states = [_initial(state, node, i, [directions, batch, hidden], layout) for i in indices]
    operands = [x, w, r, b, states[0]]
    clip = float(attrs["clip"]) if "clip" in attrs else None
    wanted = [i < len(node.output) and node.output[i] in state.read for i in range(3)]
    if wanted[0] or wanted[1]:
        if node.op_type == "LSTM":
            every = _lstm(state, [*operands, states[1]], direction, clip, False)
        elif node.op_type == "GRU":
            gru = bool(attrs.get("linear_before_reset", 0))
            every = state.emit(state.build(lambda: nn.GruOp(operands, direction, clip, gru)))
        else:
            rnn = activation.lower()
            every = state.emit(state.build(lambda: nn.RnnOp(operands, direction, clip, rnn)))
        _bind_hidden(state, node, layout, every, wanted, direction)
    if len(wanted) > 2 and wanted[2]:
        if node.op_type != "LSTM":
            raise state.fail(f"{node.op_type} has no output 2")
        cell = _lstm(state, [*operands, states[1]], direction, clip, True)
        _bind(state, node, 2, cell, layout)


def _lstm(
    state: ImportState, operands: list[SSAValue], direction: str, clip: float | None, cell: bool
) -> SSAValue:
    return state.emit(state.build(lambda: nn.LstmOp(operands, direction, clip, cell)))


def _zeros(state: ImportState, node: onnx.NodeProto, what: str, shape: list[int]) -> SSAValue:
    name = f"{node.output[0] or node.name or node.op_type}.{what}"
    return state.made_constant(name, np.zeros(shape, np.float32))


def _initial(
    state: ImportState, node: onnx.NodeProto, index: int, shape: list[int], layout: int
) -> SSAValue:
    """initial_h (input 5) or initial_c (input 6) as [directions, batch, hidden] (layout 1
    stores [batch, directions, hidden]), zeros where not given."""
    value = state.optional_operand(node, index)
    if value is None:
        return _zeros(state, node, "h0" if index == 5 else "c0", shape)
    if layout and len(nn.shape_of(value)) == 3:
        value = state.emit(state.build(lambda: nn.TransposeOp(value, [1, 0, 2])))
    if list(nn.shape_of(value)) != shape:
        what = "initial_h" if index == 5 else "initial_c"
        raise state.fail(
            f"{node.op_type} {what} has shape {list(nn.shape_of(value))}, expected {shape} "
            "([directions, batch, hidden])"
        )
    return value


def _bind_hidden(
    state: ImportState,
    node: onnx.NodeProto,
    layout: int,
    every: SSAValue,
    wanted: list[bool],
    direction: str,
) -> None:
    """Y [steps, directions, batch, hidden] (layout 1: [batch, steps, directions, hidden])
    and Y_h [directions, batch, hidden] from every step's [steps, batch, directions, hidden]."""
    steps, batch, directions, hidden = nn.shape_of(every)
    if wanted[0]:
        order = [1, 0, 2, 3] if layout else [0, 2, 1, 3]
        state.output(node, state.emit(state.build(lambda: nn.TransposeOp(every, order))), 0)
    if not wanted[1]:
        return
    lasts = []
    for d in range(directions):
        t = 0 if d == 1 or direction == "reverse" else steps - 1
        last = state.emit(
            state.build(
                lambda t=t, d=d: nn.SliceOp(every, [t, 0, d, 0], [1, batch, 1, hidden], [1] * 4)
            )
        )
        lasts.append(state.reshaped(last, [1, batch, hidden]))
    final = lasts[0]
    if len(lasts) == 2:
        final = state.emit(state.build(lambda: nn.ConcatOp(lasts, 0)))
    _bind(state, node, 1, final, layout)


def _bind(
    state: ImportState, node: onnx.NodeProto, index: int, value: SSAValue, layout: int
) -> None:
    """Binds a [directions, batch, hidden] output (layout 1: [batch, directions, hidden])."""
    if layout:
        value = state.emit(state.build(lambda: nn.TransposeOp(value, [1, 0, 2])))
    state.output(node, value, index)
