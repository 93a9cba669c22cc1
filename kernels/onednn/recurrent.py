"""The recurrent layers `nn.lstm`, `nn.gru` and `nn.rnn` as oneDNN's RNN primitive: the whole
sequence, both directions too (`bidirectional_concat`), in one call. Unrolled into a step's
small ops, a layer cost about as many calls as it had ops (docs/benchmarks.md, stop 55).

oneDNN's operands differ from ONNX's, so the kernel converts them: W [directions, gates x
hidden, input] becomes oneDNN's ldigo [1, directions, input, gates, hidden], gates in its
order (LSTM i, f, c~, o from ONNX's i, o, f, c; GRU and RNN as ONNX's), then the primitive's
own packed format; R likewise; the biases W_b + R_b per gate (GRU with linear_before_reset,
oneDNN's lbr_gru: four, R_bh apart). Done once for constant weights (the same array on every
call of a bound kernel), on each call otherwise. The result, [steps, batch, directions,
hidden], is oneDNN's dst_layer (tnc, directions side by side); `last_cell`'s, its dst_iter_c
(ldnc), with dst_layer in a buffer of the kernel's own.

Not for `clip` (oneDNN has no gate clipping). oneDNN's RNN implementations named `ref` run its
packed gemm, about as fast as its jit ones, so every implementation is accepted. Its eltwise
code is exact on finite values only, and a float32 product that overflows inside it (inf -
inf, where the reference's float64 cancels) can come out finite and wrong: each call bounds
every value the primitive computes by its operands' norms (`PreparedRecurrent._safe`; a
relu RNN's after the call, by the states it computed: `_checked`) and runs the reference
kernel where the bound passes `bounds.FINITE_LIMIT` or an operand is not finite.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Sequence
from functools import partial

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.compute import constant_operands
from nnlayout.dialects.kernel_attr import PLAIN_LAYOUT
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.bounds import FINITE_LIMIT, norm
from nnlayout.kernels.onednn.common import NOT_F32, contiguous_md, is_f32, op_key
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.reference_recurrent import recurrent as reference
from nnlayout.kernels.registry import (
    BindingSession,
    FixedCall,
    Kernel,
    Target,
    layouts_refusal,
)

# dnnl_rnn_direction_t (dnnl_types.h, v3.2)
DIRECTIONS = {"forward": 1, "reverse": 2, "bidirectional": 3}
# DNNL_ARG_*: the RNN primitive's execution arguments
SRC_LAYER, SRC_ITER, SRC_ITER_C = 1, 2, 3
DST_LAYER, DST_ITER, DST_ITER_C = 17, 18, 19
WEIGHTS_LAYER, WEIGHTS_ITER = 33, 34
#: ONNX's gates in oneDNN's order, per cell: LSTM's i, f, c~, o are ONNX's 0, 2, 3, 1.
GATE_ORDER = {nn.LstmOp: [0, 2, 3, 1], nn.GruOp: [0, 1, 2], nn.RnnOp: [0]}


def _last_cell(op: nn.RecurrentOp) -> bool:
    return isinstance(op, nn.LstmOp) and op.last_cell is not None


def _linear_before_reset(op: nn.RecurrentOp) -> bool:
    return isinstance(op, nn.GruOp) and op.linear_before_reset is not None


def _dims(op: nn.RecurrentOp) -> tuple[int, int, int, int, int]:
    steps, batch, size = shape_of(op.x)
    return steps, batch, size, op.directions, op.hidden


def _bias_gates(op: nn.RecurrentOp) -> int:
    return op.GATES + 1 if _linear_before_reset(op) else op.GATES


def _pd(op: nn.RecurrentOp) -> b.PrimitiveDesc:
    """The primitive, its weights in the format oneDNN picks (`any`)."""
    steps, batch, size, d, h = _dims(op)
    g = op.GATES
    src, state = contiguous_md((steps, batch, size)), contiguous_md((1, d, batch, h))
    layer = b.MemoryDesc.with_tag((1, d, size, g, h), b.dnnl_format_tag_any)
    iteration = b.MemoryDesc.with_tag((1, d, h, g, h), b.dnnl_format_tag_any)
    bias = contiguous_md((1, d, _bias_gates(op), h))
    dst = contiguous_md((steps, batch, d * h))
    last = contiguous_md((1, d, batch, h)) if _last_cell(op) else None
    direction = DIRECTIONS[op.direction.data]
    handle = None if last is None else last.handle
    elements = steps * batch * (size + d * h)
    macs = steps * batch * d * g * h * (size + h)
    common = (src.handle, state.handle)
    if isinstance(op, nn.LstmOp):
        return p.created(
            b.lib().dnnl_lstm_forward_primitive_desc_create,
            b.engine(),
            b.dnnl_forward_inference,
            direction,
            *common,
            state.handle,
            layer.handle,
            iteration.handle,
            None,
            None,
            bias.handle,
            dst.handle,
            handle,
            handle,
            0,
            elements=elements,
            macs=macs,
        )
    tail = (layer.handle, iteration.handle, bias.handle, dst.handle, None, 0)
    if isinstance(op, nn.GruOp):
        create = (
            b.lib().dnnl_lbr_gru_forward_primitive_desc_create
            if _linear_before_reset(op)
            else b.lib().dnnl_gru_forward_primitive_desc_create
        )
        return p.created(
            create, b.engine(), b.dnnl_forward_inference, direction, *common, *tail,
            elements=elements, macs=macs,
        )  # fmt: skip
    activation = b.dnnl_eltwise_relu if op.activation.data == "relu" else b.dnnl_eltwise_tanh
    return p.created(
        b.lib().dnnl_vanilla_rnn_forward_primitive_desc_create,
        b.engine(), b.dnnl_forward_inference, activation, direction, *common, *tail,
        ctypes.c_float(0.0), ctypes.c_float(0.0), elements=elements, macs=macs,
    )  # fmt: skip


def _args(op: nn.RecurrentOp) -> tuple[int, ...]:
    sources = (SRC_LAYER, SRC_ITER, SRC_ITER_C)[: 3 if isinstance(op, nn.LstmOp) else 2]
    last = (DST_ITER, DST_ITER_C) if _last_cell(op) else ()
    return (*sources, WEIGHTS_LAYER, WEIGHTS_ITER, b.DNNL_ARG_BIAS, DST_LAYER, *last)


def _compiled(op: nn.RecurrentOp) -> Compiled:
    return p.get_compiled(("rnn", op_key(op)), lambda: _pd(op), _args(op))


def _result_refusal(op: Operation) -> str | None:
    """What the primitive would compute otherwise than the reference: data not f32, clip."""
    assert isinstance(op, nn.RecurrentOp)
    if not is_f32(op):
        return NOT_F32
    if op.clip is not None:
        return "clip (oneDNN's RNN primitive has no gate clipping)"
    return None


def recurrent_accepts(op: Operation, target: Target, padding: bool) -> str | None:
    """f32, without clip, and a primitive oneDNN makes."""
    assert isinstance(op, nn.RecurrentOp)
    if (reason := _result_refusal(op)) is not None:
        return reason
    try:
        _compiled(op)
    except b.DnnlError as error:
        return f"oneDNN has no RNN primitive for it: {error}"
    return None


def recurrent_layouts(op: Operation, target: Target) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (PLAIN_LAYOUT,) * len(op.operands), (PLAIN_LAYOUT,)


def recurrent_types_reason(op: Operation) -> str | None:
    """Plain f32 operands and result, without clip."""
    plain = [(PLAIN_LAYOUT,)] * len(op.operands)
    return _result_refusal(op) or layouts_refusal(op, plain, [(PLAIN_LAYOUT,)])


def recurrent_workspace(op: Operation, target: Target) -> int:
    """The primitive's scratchpad; with `last_cell`, also the hidden states and the last
    hidden state it writes."""
    assert isinstance(op, nn.RecurrentOp)
    steps, batch, _, d, h = _dims(op)
    own = (steps + 1) * batch * d * h * 4 if _last_cell(op) else 0
    return _compiled(op).scratchpad_bytes + own


def recurrent_implementation(op: Operation) -> str:
    assert isinstance(op, nn.RecurrentOp)
    return _compiled(op).pd.implementation


class PreparedRecurrent:
    """A recurrent op bound once: its primitive with memory objects of its own, its
    scratchpad; its weights converted, and its constant operands' norms taken, once."""

    def __init__(self, op: Operation, session: BindingSession | None = None):
        assert isinstance(op, nn.RecurrentOp)
        self.op = op
        self.compiled = _compiled(op).private()
        self.scratchpad = np.empty(self.compiled.scratchpad_bytes, np.uint8)
        steps, batch, _, d, h = _dims(op)
        # What `_safe` bounds by: the steps, sqrt(batch x hidden x directions), relu.
        self.steps, self.width = steps, math.sqrt(batch * h * d)
        self.relu = isinstance(op, nn.RnnOp) and op.activation.data == "relu"
        self.layer = np.empty((steps, batch, d * h), np.float32) if _last_cell(op) else None
        self.last_h = np.empty((1, d, batch, h), np.float32) if _last_cell(op) else None
        self.constant = sorted(constant_operands(op))
        self.constant_weights = {1, 2, 3} <= set(self.constant)
        # oneDNN's weights and the constants' norms, once (`_steady`).
        self.steady: tuple[dict[int, np.ndarray], dict[int, float]] | None = None
        # What a call re-points: the sequence, the initial states and the result.
        args = (SRC_LAYER, SRC_ITER, SRC_ITER_C)[: len(op.operands) - 3]
        args += (DST_ITER_C if _last_cell(op) else DST_LAYER,)
        self.varying = [self.compiled.memories[arg] for arg in args]
        self.sizes = [self.compiled.nbytes(arg) for arg in args]
        self.pointed = False  # the memory objects hold a call's weights and scratchpad
        self.bound: list[Compiled] = []  # the primitives of the calls `on` made, kept alive

    def _converted(self, w: np.ndarray, r: np.ndarray, bias: np.ndarray) -> dict[int, np.ndarray]:
        op, pd = self.op, self.compiled.pd
        _, _, size, d, h = _dims(op)
        order = GATE_ORDER[type(op)]
        g = op.GATES

        def ldigo(array: np.ndarray, rows: int, which: int) -> np.ndarray:
            plain = array.reshape(d, g, h, rows)[:, order].transpose(0, 3, 1, 2)[None]
            wanted = pd.md(b.dnnl_query_weights_md, which)
            reorder = p.get_compiled(  # made once: weights given at run time come each call
                ("rnn weights", op_key(op), which),
                lambda: p.reorder_pd(contiguous_md((1, d, rows, g, h)), wanted),
                (b.DNNL_ARG_SRC, b.DNNL_ARG_DST),
            )
            packed = np.empty(wanted.size // 4, np.float32)
            source = np.ascontiguousarray(plain, np.float32).reshape(-1)
            scratchpad = np.empty(reorder.scratchpad_bytes, np.uint8)
            reorder({b.DNNL_ARG_SRC: source, b.DNNL_ARG_DST: packed}, scratchpad)
            return packed

        wb, rb = bias[:, : g * h].reshape(d, g, h), bias[:, g * h :].reshape(d, g, h)
        summed = (wb + rb)[:, order]
        if _linear_before_reset(op):
            summed = np.concatenate([summed[:, :2], wb[:, 2:], rb[:, 2:]], axis=1)
        return {
            WEIGHTS_LAYER: ldigo(w, size, 0),
            WEIGHTS_ITER: ldigo(r, h, 1),
            b.DNNL_ARG_BIAS: np.ascontiguousarray(summed[None], np.float32),
        }

    def _steady(self, arrays: list[np.ndarray]) -> tuple[dict[int, np.ndarray], dict[int, float]]:
        """oneDNN's weights and biases from W, R and B, and the norms of the constant
        operands: made once where W, R and B are constants."""
        if self.steady is not None:
            return self.steady
        steady = self._converted(*arrays[1:4]), {i: norm(arrays[i]) for i in self.constant}
        if self.constant_weights:
            self.steady = steady
        return steady

    @staticmethod
    def _norms(arrays: Sequence[np.ndarray], known: dict[int, float]) -> list[float]:
        """The operands' norms: `known` (the constants'), else measured (inf or NaN where an
        operand is not finite)."""
        return [known[i] if i in known else norm(a) for i, a in enumerate(arrays)]

    def _safe(self, n: Sequence[float]) -> bool:
        """Whether no value the primitive computes can overflow float32, bounded before the
        call by the operands' norms `n` (`_norms`; an operand not finite is not safe). A
        gate's input is at most |x| |W| + |h| |R| + 2 |B| (Frobenius norms; W's and R's
        biases summed); an LSTM's, a GRU's or a tanh RNN's hidden state is at most max(1,
        h0's largest) each, so |h| <= sqrt(batch x hidden x directions) max(1, |h0|), and an
        LSTM's cell state grows by 1 a step. A relu RNN's states have no such bound: before
        the call its operands need only be finite, and `_checked` bounds its gates by the
        states it computed."""
        if not all(math.isfinite(v) for v in n):  # max(1.0, NaN) would drop a NaN
            return False
        x, w, r, bias, h0 = n[:5]
        if self.relu:
            return x * w + 2 * bias + h0 * r < FINITE_LIMIT
        gates = x * w + 2 * bias + self.width * max(1.0, h0) * r
        cell = n[5] + self.steps if len(n) > 5 else 0.0
        return gates < FINITE_LIMIT and cell < FINITE_LIMIT

    def _checked(self, n: Sequence[float], out: np.ndarray) -> bool:
        """After the call, for a relu RNN: whether no gate's input can have overflowed,
        bounded by the states the call computed. Step by step (in each direction's order),
        a gate's input is at most |x| |W| + 2 |B| + |h of the step before| |R|; up to the
        first overflow every state is right, so where the largest of them all (its norm,
        |out|: NaN or inf where one is not finite) keeps that bound below the limit, none
        overflowed (an overflow's NaN can come out of a relu as 0, finite and wrong)."""
        if not self.relu:
            return True
        x, w, r, bias, h0 = n[:5]
        states = norm(out)
        return math.isfinite(states) and x * w + 2 * bias + max(h0, states) * r < FINITE_LIMIT

    def on(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> FixedCall:
        """The call on these arrays: memory objects of its own pointed once where every array
        is C-contiguous f32 and the weights constant; each call then bounds what the
        primitive computes by its operands' norms (`_safe`) and runs it, or the reference."""
        arrays = [np.asarray(a) for a in inputs]
        if not (_direct([*arrays, out]) and self.constant_weights):
            return partial(self, inputs, out)
        weights, known = self._steady(arrays)
        compiled = self.compiled.private()  # memory objects of its own, pointed once
        compiled.point(self._arguments(arrays, weights, out), self.scratchpad)
        self.bound.append(compiled)  # the call's arguments are its memory objects' handles
        execute, op = compiled.runner(), self.op
        norms, safe, checked = self._norms, self._safe, self._checked

        def call() -> None:
            n = norms(arrays, known)
            if safe(n):
                execute()
                if checked(n, out):
                    return
            out[...] = reference(op, inputs).reshape(out.shape)

        return call

    def __call__(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        arrays = [np.ascontiguousarray(a, np.float32) for a in inputs]
        weights, known = self._steady(arrays)
        n = self._norms(arrays, known)
        if not self._safe(n):
            out[...] = reference(self.op, inputs).reshape(out.shape)
            return
        target = out if _direct([out]) else np.empty(out.shape, np.float32)
        if self.steady is None or not self.pointed:
            self.compiled.point(self._arguments(arrays, weights, target), self.scratchpad)
            self.pointed = self.steady is not None
        else:  # only the sequence, the initial states and the result move between calls
            varying = [arrays[0], *arrays[4:], target]
            for memory, size, array in zip(self.varying, self.sizes, varying, strict=True):
                if array.nbytes != size:
                    raise ValueError(
                        f"{self.op.name}: a buffer of {array.nbytes} bytes, not {size}"
                    )
                memory.point_to(array.ctypes.data)
        self.compiled.execute()
        if not self._checked(n, target):
            out[...] = reference(self.op, inputs).reshape(out.shape)
        elif target is not out:
            out[...] = target

    def _arguments(
        self, arrays: list[np.ndarray], weights: dict[int, np.ndarray], out: np.ndarray
    ) -> dict[int, np.ndarray]:
        """The primitive's execution arguments: the sequence, initial states, weights and
        the result (with `last_cell`, the kernel's own hidden states and last h)."""
        args = {SRC_LAYER: arrays[0], SRC_ITER: arrays[4], **weights}
        if isinstance(self.op, nn.LstmOp):
            args[SRC_ITER_C] = arrays[5]
        if self.layer is None or self.last_h is None:
            return args | {DST_LAYER: out}
        return args | {DST_LAYER: self.layer, DST_ITER: self.last_h, DST_ITER_C: out}


def _direct(arrays: Sequence[np.ndarray]) -> bool:
    return all(a.dtype == np.float32 and a.flags.c_contiguous for a in arrays)


def recurrent_run(op: Operation, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The registry's `impl`: the op into a new array."""
    out = np.empty(shape_of(op.results[0]), np.float32)
    PreparedRecurrent(op)(inputs, out)
    return out


def recurrent_kernels(family: str) -> list[Kernel]:
    """`lstm_onednn`, `gru_onednn` and `rnn_onednn`: plain operands and result (oneDNN's own
    weight formats are made by the kernel), no halos, no strided results."""
    return [
        Kernel(
            f"{op_type.name.removeprefix('nn.')}_onednn",
            op_type,
            family,
            recurrent_run,
            accepts=recurrent_accepts,
            layouts=recurrent_layouts,
            accepts_types=recurrent_types_reason,
            workspace=recurrent_workspace,
            reads_halo=False,
            writes_strided=False,
            prepare=PreparedRecurrent,
            implementation_of=recurrent_implementation,
        )
        for op_type in (nn.LstmOp, nn.GruOp, nn.RnnOp)
    ]
