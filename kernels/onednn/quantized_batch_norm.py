"""`nn.qbatch_norm` (quantize(batch_norm(dequantize(x))), `fold-qdq`'s) as one oneDNN binary
primitive, u8/s8 to u8/s8, NHWC where the data has rank 4 (what the int8 convolutions read
and write), else plain:

    y = saturate(round_half_even(((x - x_zp) * x_scale * factor + shift) / y_scale) + y_zp)

with factor = scale / sqrt(var + epsilon) and shift = bias - mean * factor per channel,
computed in numpy exactly as the reference kernel computes them. The binary subtraction of a
one-element x_zp (exact on 8-bit integers), then post-ops: binary multiplications by x_scale
and by factor (one per channel), a binary addition of shift (one per channel), a binary
division by y_scale, round, linear (+ y_zp), the conversion saturating: each an f32 operation
rounded once, in the reference's order (dequantize, batch norm, quantize), so the bytes are
the reference's (tests/kernels/test_onednn_quantized_batch_norm.py). One pass over x instead
of three (and no f32 tensor four times x's size): DenseNet-121 int8's 62 normalisations.

A factor or shift that is not finite (a zero variance), or an x scale so large that
dequantized values overflow (infinity times a zero factor), makes a NaN possible, which
oneDNN converts to 0 and the reference to y's zero point: the kernel then runs the reference
(refused at dispatch, for the scale). The
vectors are read on every call unless they are load-time constants (`constant_operands`),
whose factor and shift are computed once. Per-axis scales are refused (`refusal`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.compute import constant_operands
from nnlayout.dialects.kernel_attr import PLAIN_LAYOUT
from nnlayout.dialects.layout import LayoutSpec
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import MemoryDesc
from nnlayout.kernels.onednn.common import Layouts, is_fast
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.onednn.quantized import INT8, data_type_of
from nnlayout.kernels.onednn.quantized_call import PrimitiveCall, int8_kernel
from nnlayout.kernels.onednn.quantized_reorder import data_md, pack_result, unpack_input
from nnlayout.kernels.reduction_reference import batch_norm_affine
from nnlayout.kernels.reference_quantized import qbatch_norm
from nnlayout.kernels.registry import BindingRefused, FixedCall, Kernel, Target, layouts_refusal

NHWC = LayoutSpec.parse("NHWC").text
VECTORS = (1, 2, 3, 4)  # scale, bias, mean, var
ONE = (1, 1, 1, 1)


def _layout(op: Operation) -> str:
    return NHWC if len(shape_of(op.operands[0])) == 4 else PLAIN_LAYOUT


def _layouts(op: Operation, target: Target) -> Layouts:
    """Input and result NHWC at rank 4, else plain; the vectors plain."""
    layout = _layout(op)
    return (layout, *(PLAIN_LAYOUT,) * 4), (layout,)


def refusal(op: Operation) -> str | None:
    """Why the oneDNN kernel cannot compute `op` (None: it can)."""
    assert isinstance(op, nn.QBatchNormOp)
    if data_type_of(op.input) not in INT8 or data_type_of(op.output) not in INT8:
        return "not u8 or s8 data; the oneDNN kernel takes u8 or s8"
    x = op.qparams("x")
    if x.per_axis or op.qparams("y").per_axis:
        return "per-axis scales; the oneDNN kernel takes one per tensor"
    low, high = nn.integer_range(op.input.type.element_type)  # type: ignore[attr-defined]
    largest = max(abs(low - int(x.zero_point)), abs(high - int(x.zero_point)))
    with np.errstate(over="ignore"):
        if not np.isfinite(np.float32(largest) * np.float32(x.scale)):
            return "x's scale overflows float32 (a zero factor would then make a NaN)"
    if len(shape_of(op.input)) > 6:
        return "rank above 6; oneDNN's binary takes at most 6 dimensions"
    return None


def _pd(op: nn.QBatchNormOp) -> b.PrimitiveDesc:
    """The binary subtraction of x's zero point with the rest as post-ops (module doc)."""
    shape = shape_of(op.input)
    rank = len(shape)
    one = (1,) * rank
    channel = (1, shape[1]) + (1,) * (rank - 2)
    layout = _layout(op)
    post_ops = (
        b.PostOp.binary(b.dnnl_binary_mul, one),
        b.PostOp.binary(b.dnnl_binary_mul, channel),
        b.PostOp.binary(b.dnnl_binary_add, channel),
        b.PostOp.binary(b.dnnl_binary_div, one),
        b.PostOp.eltwise(b.dnnl_eltwise_round),
        b.PostOp.eltwise(b.dnnl_eltwise_linear, 1.0, float(op.qparams("y").zero_point)),
    )
    return p.binary_pd(
        b.dnnl_binary_sub,
        data_md(shape, layout, data_type_of(op.input)),  # type: ignore[arg-type]
        MemoryDesc.with_strides(one, one, b.dnnl_f32),
        data_md(shape, layout, data_type_of(op.output)),  # type: ignore[arg-type]
        post_ops,
    )


def _accepts(op: Operation, target: Target, padding: bool) -> str | None:
    reason = refusal(op)
    if reason is not None:
        return reason
    try:
        implementation = _pd(op).implementation  # type: ignore[arg-type]
    except b.DnnlError as error:
        return f"oneDNN has no primitive for it: {error}"
    return None if is_fast(implementation) else f"oneDNN offers only {implementation} for it"


def _accepts_types(op: Operation) -> str | None:
    operands, results = _layouts(op, None)  # type: ignore[arg-type]
    return layouts_refusal(op, [(layout,) for layout in operands], [(results[0],)])


class _Bound:
    """The primitive bound once, with its one-element and per-channel arrays; factor and
    shift computed once where the vectors are load-time constants, else on every call."""

    def __init__(self, op: Operation):
        reason = refusal(op)
        if reason is not None:
            raise BindingRefused(reason)
        assert isinstance(op, nn.QBatchNormOp)
        self.op = op
        x, y = op.qparams("x"), op.qparams("y")
        channels = shape_of(op.input)[1]
        self.factor = np.zeros(channels, np.float32)
        self.shift = np.zeros(channels, np.float32)
        values = {
            b.DNNL_ARG_SRC_1: np.array([x.zero_point], np.float32),
            b.PostOp.binary_arg(0): np.array([x.scale], np.float32),
            b.PostOp.binary_arg(1): self.factor,
            b.PostOp.binary_arg(2): self.shift,
            b.PostOp.binary_arg(3): np.array([y.scale], np.float32),
        }
        args = (b.DNNL_ARG_SRC, *values, b.DNNL_ARG_DST)
        try:
            self.call = PrimitiveCall(Compiled(_pd(op), args), values)
        except b.DnnlError as error:
            raise BindingRefused(f"oneDNN has no primitive for it as typed: {error}") from None
        self.constant = set(VECTORS) <= constant_operands(op)
        self.finite: bool | None = None  # factor and shift computed and finite (None: not yet)

    def _prepared(self, vectors: Sequence[np.ndarray]) -> bool:
        """factor and shift from `vectors` (once, where they are constants); whether they are
        finite."""
        if self.finite is None or not self.constant:
            epsilon = np.float32(self.op.epsilon.value.data)
            with np.errstate(all="ignore"):  # a zero variance: infinities, the reference runs
                factor, shift = batch_norm_affine(
                    [np.asarray(v, np.float32) for v in vectors], epsilon
                )
            self.factor[...], self.shift[...] = factor, shift
            self.finite = bool(np.all(np.isfinite(factor)) and np.all(np.isfinite(shift)))
        return self.finite

    def _direct(self, x: np.ndarray, out: np.ndarray) -> bool:
        compiled = self.call.compiled
        return (
            x.flags.c_contiguous
            and out.flags.c_contiguous
            and x.nbytes == compiled.nbytes(b.DNNL_ARG_SRC)
            and out.nbytes == compiled.nbytes(b.DNNL_ARG_DST)
        )

    def _reference(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        """The reference kernel's result, in the layouts the types carry."""
        x, *vectors = inputs
        layout = _layout(self.op)
        result = qbatch_norm(self.op, [unpack_input(x, layout, self.op), *vectors])
        out[...] = pack_result(result, layout).reshape(out.shape)

    def __call__(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        x = inputs[0]
        if not (self._prepared(inputs[1:]) and self._direct(x, out)):
            self._reference(inputs, out)
            return
        self.call.call_on({b.DNNL_ARG_SRC: x.reshape(-1)}, out.reshape(-1))

    def on(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> FixedCall:
        x = inputs[0]
        if not self._direct(x, out):
            return lambda: self(inputs, out)
        execute = self.call.bind_to({b.DNNL_ARG_SRC: x.reshape(-1)}, out.reshape(-1))

        def run() -> None:
            if self._prepared(inputs[1:]):
                execute()
            else:
                self._reference(inputs, out)

        return run


def quantized_batch_norm_kernels(family: str) -> list[Kernel]:
    """qbatch_norm_onednn."""
    return [
        int8_kernel(
            "qbatch_norm_onednn",
            nn.QBatchNormOp,
            family,
            _Bound,
            accepts=_accepts,
            layouts=_layouts,
            accepts_types=_accepts_types,
            workspace=lambda op, target: _pd(op).scratchpad_bytes,
            implementation_of=lambda op: _pd(op).implementation,
        )
    ]
