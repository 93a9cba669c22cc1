"""Converters of ONNX's recurrent layers, LSTM, GRU and RNN (torch's `nn.LSTM`, `nn.GRU`,
`nn.RNN`), unrolled over the sequence at import, as TVM's ONNX frontend does: shapes are
static, so each time step becomes the `nn` ops of its equations, which have oneDNN kernels and
layout rules already.

The input's product with W is taken for every step at once (one fully connected product of
[steps x batch, input] with W^T, its bias W_b + R_b added, exact in real arithmetic); each step
then adds its recurrent product H_{t-1} R^T, slices the gates (ONNX's order: LSTM i, o, f, c;
GRU z, r, h) and combines them; a first step with no initial state skips the product with
zeros. The reverse direction walks the steps backwards; a bidirectional layer concatenates
both. Refused, naming what is missing: sequence_lens other than every sequence at full
length, activations other than the defaults (and, for RNN, Relu), LSTM's input_forget and
peepholes, weights computed at run time.

    %y = "LSTM"(%x, %w, %r) (10 steps)  ->  %xw = nn.matmul %x2d, %w_t ... (once)
                                            per step: nn.slice, nn.matmul %h, %r_t, nn.add,
                                            4 gate slices, nn.sigmoid x 3, nn.tanh x 2,
                                            nn.mul x 3, nn.add
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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


@dataclass
class Layer:
    """One direction of a recurrent node: its weights and what its steps share."""

    state: ImportState
    node: onnx.NodeProto
    hidden: int
    batch: int
    w: np.ndarray  # [gates x hidden, input]
    r: np.ndarray  # [gates x hidden, hidden]
    wb: np.ndarray  # [gates x hidden]
    rb: np.ndarray
    clip: float | None
    activation: str  # RNN's
    direction: int

    def __post_init__(self) -> None:
        self.made: dict[str, SSAValue] = {}

    def constant(self, what: str, make: Callable[[], np.ndarray]) -> SSAValue:
        """The constant `what` of this direction, made once (the steps share it)."""
        if what not in self.made:
            name = f"{self.node.output[0] or self.node.name}.{what}{self.direction}"
            array = np.ascontiguousarray(make(), np.float32)
            self.made[what] = self.state.made_constant(name, array)
        return self.made[what]

    def emit(self, make: Callable[[], nn.NNOp]) -> SSAValue:
        return self.state.emit(self.state.build(make))

    def columns(self, x: SSAValue, start: int, size: int) -> SSAValue:
        """Columns start .. start + size of a [batch, n] value."""
        return self.emit(lambda: nn.SliceOp(x, [0, start], [self.batch, size], [1, 1]))

    def clipped(self, x: SSAValue) -> SSAValue:
        if self.clip is None:
            return x
        return self.emit(lambda: nn.ClipOp(x, -self.clip, self.clip))

    def gate(self, x: SSAValue, op_type: type[nn.UnaryOp]) -> SSAValue:
        return self.emit(lambda: op_type(self.clipped(x)))


def _attributes(state: ImportState, node: onnx.NodeProto, attrs: dict) -> str:
    """RNN's activation (Tanh or Relu); refuses what the unrolled form does not compute."""
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
    x = state.operand(node, 0)
    layout = int(attrs.get("layout", 0))
    if len(nn.shape_of(x)) != 3:
        raise state.fail(f"{node.op_type} input of rank {len(nn.shape_of(x))}; ONNX's has rank 3")
    if layout:
        x = state.emit(state.build(lambda: nn.TransposeOp(x, [1, 0, 2])))
    steps, batch, _ = nn.shape_of(x)
    _sequence_lengths(state, node, steps, batch)
    hidden = int(attrs.get("hidden_size", 0))
    gates = GATES[node.op_type]
    w = state.constant_array(node.input[1], f"{node.op_type}'s W").astype(np.float32)
    r = state.constant_array(node.input[2], f"{node.op_type}'s R").astype(np.float32)
    directions = w.shape[0]
    if hidden < 1 or w.shape[1] != gates * hidden or r.shape[1:] != (gates * hidden, hidden):
        raise state.fail(
            f"{node.op_type} weights W {list(w.shape)} and R {list(r.shape)} do not have "
            f"{gates} gates of hidden_size {hidden}"
        )
    b = np.zeros((directions, 2 * gates * hidden), np.float32)
    if len(node.input) > 3 and node.input[3]:
        b = state.constant_array(node.input[3], f"{node.op_type}'s B").astype(np.float32)
    clip = float(attrs["clip"]) if "clip" in attrs else None
    outputs, finals, cells = [], [], []
    for d in range(directions):
        wb, rb = b[d, : gates * hidden], b[d, gates * hidden :]
        layer = Layer(state, node, hidden, batch, w[d], r[d], wb, rb, clip, activation, d)
        initial = [_initial(state, node, i, d, batch, hidden) for i in (5, 6)]
        reverse = d == 1 or text_attribute(attrs, "direction", "forward") == "reverse"
        ys, h, c = _direction(layer, x, initial, reverse, bool(attrs.get("linear_before_reset", 0)))
        outputs.append(ys)
        finals.append(h)
        cells.append(c)
    _bind_outputs(state, node, layout, outputs, finals, cells)


def _initial(
    state: ImportState, node: onnx.NodeProto, index: int, direction: int, batch: int, hidden: int
) -> SSAValue | None:
    """Direction `direction`'s initial_h (input 5) or initial_c (input 6) as [batch, hidden],
    or None where not given (zeros)."""
    if len(node.input) <= index or not node.input[index] or (node.op_type != "LSTM" and index == 6):
        return None
    value = state.operand(node, index)
    part = state.emit(
        state.build(lambda: nn.SliceOp(value, [direction, 0, 0], [1, batch, hidden], [1, 1, 1]))
    )
    return state.reshaped(part, [batch, hidden])


def _direction(
    layer: Layer,
    x: SSAValue,
    initial: list[SSAValue | None],
    reverse: bool,
    linear_before_reset: bool,
) -> tuple[list[SSAValue], SSAValue, SSAValue | None]:
    """The hidden state of every step (in time order), the last hidden and cell states."""
    steps, batch, size = nn.shape_of(x)
    columns = layer.w.shape[0]
    folded = layer.rb.copy()  # R's bias adds to the input's product,
    if layer.node.op_type == "GRU" and linear_before_reset:  # but the h gate's: `_gru_step`
        folded[2 * layer.hidden :] = 0
    bias = layer.constant("bias", lambda: layer.wb + folded)
    flat = layer.state.reshaped(x, [steps * batch, size])
    w_t = layer.constant("w_t", lambda: layer.w.T)
    product = layer.emit(lambda: nn.MatmulOp(flat, w_t))
    added = layer.emit(lambda: nn.AddOp(product, bias))
    projected = layer.state.reshaped(added, [steps, batch, columns])
    rows = 2 * layer.hidden if layer.node.op_type == "GRU" and not linear_before_reset else None
    r_t = layer.constant("r_t", lambda: layer.r[:rows].T)  # a GRU's h rows apart: `_gru_step`
    h, c = initial
    hs: dict[int, SSAValue] = {}
    step_fn = STEPS[layer.node.op_type]
    for t in range(steps - 1, -1, -1) if reverse else range(steps):
        step = layer.emit(
            lambda t=t: nn.SliceOp(projected, [t, 0, 0], [1, batch, columns], [1, 1, 1])
        )
        xw = layer.state.reshaped(step, [batch, columns])
        h, c = step_fn(layer, xw, h, c, r_t, linear_before_reset)
        hs[t] = h
    assert h is not None
    return [hs[t] for t in range(steps)], h, c


def _recurrent_product(layer: Layer, h: SSAValue | None, r_t: SSAValue, xw: SSAValue) -> SSAValue:
    """xw + h R^T (xw alone where h is the zero initial state)."""
    if h is None:
        return xw
    product = layer.emit(lambda: nn.MatmulOp(h, r_t))
    return layer.emit(lambda: nn.AddOp(xw, product))


def _lstm_step(
    layer: Layer, xw: SSAValue, h: SSAValue | None, c: SSAValue | None, r_t: SSAValue, _: bool
) -> tuple[SSAValue, SSAValue]:
    n = layer.hidden
    gates = _recurrent_product(layer, h, r_t, xw)
    i, o, f, g = (layer.columns(gates, k * n, n) for k in range(4))
    i, o, f = (layer.gate(v, nn.SigmoidOp) for v in (i, o, f))
    g = layer.gate(g, nn.TanhOp)
    new = layer.emit(lambda: nn.MulOp(i, g))
    if c is not None:
        kept = layer.emit(lambda: nn.MulOp(f, c))
        new = layer.emit(lambda: nn.AddOp(kept, new))
    squashed = layer.emit(lambda: nn.TanhOp(new))
    return layer.emit(lambda: nn.MulOp(o, squashed)), new


def _gru_step(
    layer: Layer,
    xw: SSAValue,
    h: SSAValue | None,
    c: SSAValue | None,
    r_t: SSAValue,
    linear_before_reset: bool,
) -> tuple[SSAValue, None]:
    """z, r from the input's and the recurrent products; the candidate from r times the
    recurrent h product (linear_before_reset) or from the product of r times h; the new
    state (1 - z) candidate + z h. A zero state's recurrent terms are 0 (or R_bh)."""
    n = layer.hidden
    x_z, x_r, x_h = (layer.columns(xw, k * n, n) for k in range(3))
    recurrent = None if h is None else layer.emit(lambda: nn.MatmulOp(h, r_t))
    z, r = (
        layer.gate(
            x
            if recurrent is None
            else layer.emit(lambda x=x, k=k: nn.AddOp(x, layer.columns(recurrent, k * n, n))),
            nn.SigmoidOp,
        )
        for k, x in enumerate((x_z, x_r))
    )
    r_bh = layer.constant("r_bh", lambda: layer.rb[2 * n :][None])
    if linear_before_reset:
        h_h = (
            r_bh
            if recurrent is None
            else layer.emit(lambda: nn.AddOp(layer.columns(recurrent, 2 * n, n), r_bh))
        )
        candidate = layer.emit(lambda: nn.AddOp(x_h, layer.emit(lambda: nn.MulOp(r, h_h))))
    elif h is None:
        candidate = x_h
    else:
        reset = layer.emit(lambda: nn.MulOp(r, h))
        r_h_t = layer.constant("r_h_t", lambda: layer.r[2 * n :].T)
        candidate = layer.emit(lambda: nn.AddOp(x_h, layer.emit(lambda: nn.MatmulOp(reset, r_h_t))))
    hidden = layer.gate(candidate, nn.TanhOp)
    one = layer.constant("one", lambda: np.ones((1, 1)))
    new = layer.emit(lambda: nn.MulOp(layer.emit(lambda: nn.SubOp(one, z)), hidden))
    if h is not None:
        new = layer.emit(lambda: nn.AddOp(new, layer.emit(lambda: nn.MulOp(z, h))))
    return new, None


def _rnn_step(
    layer: Layer, xw: SSAValue, h: SSAValue | None, c: SSAValue | None, r_t: SSAValue, _: bool
) -> tuple[SSAValue, None]:
    total = _recurrent_product(layer, h, r_t, xw)
    return layer.gate(total, nn.ReluOp if layer.activation == "Relu" else nn.TanhOp), None


#: Each layer's step: (layer, the step's input product, h, c, R^T, linear_before_reset) ->
#: the new h and c.
STEPS = {"LSTM": _lstm_step, "GRU": _gru_step, "RNN": _rnn_step}


def _bind_outputs(
    state: ImportState,
    node: onnx.NodeProto,
    layout: int,
    outputs: list[list[SSAValue]],
    finals: list[SSAValue],
    cells: list[SSAValue | None],
) -> None:
    """Y [steps, directions, batch, hidden] (layout 1: [batch, steps, directions, hidden]),
    Y_h and Y_c [directions, batch, hidden] (layout 1: [batch, directions, hidden])."""
    batch, hidden = nn.shape_of(finals[0])

    def stacked(values: list[SSAValue], axis: int, shape: list[int]) -> SSAValue:
        parts = [state.reshaped(v, shape) for v in values]
        if len(parts) == 1:
            return parts[0]
        return state.emit(state.build(lambda: nn.ConcatOp(parts, axis)))

    wanted = [i < len(node.output) and node.output[i] for i in range(3)]
    if wanted[0]:
        per_direction = [stacked(ys, 0, [1, 1, batch, hidden]) for ys in outputs]
        y = stacked(per_direction, 1, nn.shape_of(per_direction[0]))
        if layout:
            y = state.emit(state.build(lambda: nn.TransposeOp(y, [2, 0, 1, 3])))
        state.output(node, y, 0)
    for index, values in ((1, finals), (2, cells)):
        if not wanted[index]:
            continue
        if any(v is None for v in values):
            raise state.fail(f"{node.op_type} has no output {index}")
        last = stacked(values, 0, [1, batch, hidden])  # type: ignore[arg-type]
        if layout:
            last = state.emit(state.build(lambda last=last: nn.TransposeOp(last, [1, 0, 2])))
        state.output(node, last, index)
