"""Reference kernels of the recurrent layers `nn.lstm`, `nn.gru` and `nn.rnn`: ONNX's
equations step by step, in float64 (rounded to the result's type once, at the end), as onnx's
reference evaluator writes them (onnx/reference/ops/op_lstm.py, op_gru.py, op_rnn.py). The
input's product with W is taken for every step at once; each step adds its recurrent product.
`clip` bounds every activation's input but the cell state's tanh, as onnxruntime does."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from nnlayout.dialects import nn

Arrays = tuple[np.ndarray, np.ndarray]
# (x W^T + W_b of the step, h, c, R, R_b) -> the new h and c.
Step = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray], Arrays]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def _clipped(op: nn.RecurrentOp) -> Callable[[np.ndarray], np.ndarray]:
    bound = op.clip_value
    return (lambda x: x) if bound is None else (lambda x: np.clip(x, -bound, bound))


def _lstm_step(op: nn.RecurrentOp) -> Step:
    clip, n = _clipped(op), op.hidden

    def step(xw: np.ndarray, h: np.ndarray, c: np.ndarray, r: np.ndarray, rb: np.ndarray) -> Arrays:
        gates = clip(xw + h @ r.T + rb)
        i, o, f = (_sigmoid(gates[:, k * n : (k + 1) * n]) for k in range(3))
        c = f * c + i * np.tanh(gates[:, 3 * n :])
        return o * np.tanh(c), c

    return step


def _gru_step(op: nn.RecurrentOp) -> Step:
    clip, n = _clipped(op), op.hidden
    linear_before_reset = isinstance(op, nn.GruOp) and op.linear_before_reset is not None

    def step(xw: np.ndarray, h: np.ndarray, c: np.ndarray, r: np.ndarray, rb: np.ndarray) -> Arrays:
        hr = h @ r[: 2 * n].T + rb[: 2 * n]
        z = _sigmoid(clip(xw[:, :n] + hr[:, :n]))
        reset = _sigmoid(clip(xw[:, n : 2 * n] + hr[:, n:]))
        if linear_before_reset:
            recurrent = reset * (h @ r[2 * n :].T + rb[2 * n :])
        else:
            recurrent = (reset * h) @ r[2 * n :].T + rb[2 * n :]
        candidate = np.tanh(clip(xw[:, 2 * n :] + recurrent))
        return (1.0 - z) * candidate + z * h, c

    return step


def _rnn_step(op: nn.RecurrentOp) -> Step:
    clip = _clipped(op)
    relu = isinstance(op, nn.RnnOp) and op.activation.data == "relu"

    def step(xw: np.ndarray, h: np.ndarray, c: np.ndarray, r: np.ndarray, rb: np.ndarray) -> Arrays:
        total = clip(xw + h @ r.T + rb)
        return (np.maximum(total, 0.0) if relu else np.tanh(total)), c

    return step


STEPS: dict[type[nn.RecurrentOp], Callable[[nn.RecurrentOp], Step]] = {
    nn.LstmOp: _lstm_step,
    nn.GruOp: _gru_step,
    nn.RnnOp: _rnn_step,
}


def recurrent(op: nn.RecurrentOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Every step's hidden state [steps, batch, directions, hidden], or nn.lstm's last cell
    state [directions, batch, hidden] where it says `last_cell`."""
    x, w, r, b, h0, *rest = (np.asarray(a, np.float64) for a in inputs)
    steps, batch, _ = x.shape
    rows = op.GATES * op.hidden
    step = STEPS[type(op)](op)
    ys = np.empty((steps, batch, op.directions, op.hidden))
    cells = np.zeros((op.directions, batch, op.hidden))
    with np.errstate(over="ignore", invalid="ignore"):  # NaN and inf as IEEE arithmetic has them
        for d in range(op.directions):
            xw = x @ w[d].T + b[d, :rows]
            h, c = h0[d], rest[0][d] if rest else cells[d]
            reverse = d == 1 or op.direction.data == "reverse"
            for t in range(steps - 1, -1, -1) if reverse else range(steps):
                h, c = step(xw[t], h, c, r[d], b[d, rows:])
                ys[t, :, d] = h
            cells[d] = c
    last_cell = isinstance(op, nn.LstmOp) and op.last_cell is not None
    dtype = np.asarray(inputs[0]).dtype
    with np.errstate(over="ignore"):  # rounded to float32: inf where it overflows
        return (cells if last_cell else ys).astype(dtype)
