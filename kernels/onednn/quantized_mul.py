"""`nn.qmul` of two 8-bit tensors of one shape whatever their zero points (a transformer's
GELU, x times its table's 1 + erf(x / sqrt 2), as onnxruntime's `quantize_static` writes it),
as two oneDNN binaries:

    y = saturate(round((a - a_zp) * (b - b_zp) * a_scale * b_scale / y_scale + y_zp))

oneDNN's binary takes no source zero points (qmul_onednn runs the case where both are 0), so
the kernel first writes t = b - b_zp in f32 (a reorder with b_zp as its source zero point;
exact. oneDNN's binary on 8-bit data writes 8-bit data only, or runs its reference code),
then computes a - a_zp (a binary sub of the scalar a_zp) with the post-ops: times t (a binary
mul by that tensor), the linear m * v + y_zp (m = a_scale * b_scale / y_scale in f32), and
the clamp where the op has one; oneDNN rounds half to even and saturates into y's type. The
product of the centred integers is exact in f32 (|.| <= 255 * 255); the requantization is
one f32 multiply-add, the reference's is a product of dequantized values then a division:
within one step of it where the exact value lies at a half step.

Element-wise on operands of one shape and layout, so oneDNN sees each as one flat run:
NHWC at rank 4 (what the int8 convolutions write), plain otherwise. t (4 bytes per element)
is the kernel's, counted in its workspace beside the two scratchpads.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial

import numpy as np
from xdsl.ir import Operation, SSAValue

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import PLAIN_LAYOUT
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.attributes import Quantization
from nnlayout.kernels.onednn.common import Layouts, is_fast
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.onednn.quantized import INT8, data_type_of
from nnlayout.kernels.onednn.quantized_call import (
    PrimitiveCall,
    int8_kernel,
    maps_fill,
    runtime_descriptors,
    runtime_values,
    typed_as,
)
from nnlayout.kernels.onednn.quantized_eltwise import clamp_post_ops
from nnlayout.kernels.registry import BindingRefused, FixedCall, Kernel, Target

NHWC = "NHWC"
_FACTOR = b.PostOp.binary_arg(0)
_CENTRED = Quantization((), ((b.DNNL_ARG_SRC, 0),))  # the reorder's source zero point


def _rule_reason(op: nn.QMulOp) -> str | None:
    """What the kernel computes, of `op` (None: all of it)."""
    if any(data_type_of(v) not in INT8 for v in (op.lhs, op.rhs, op.output)):
        return "an operand or the result is not u8 or s8"
    if shape_of(op.lhs) != shape_of(op.rhs):
        return "broadcasting; the kernel takes operands of one shape"
    if any(op.qparams(side).per_axis for side in "aby"):
        return "a per-axis scale or zero point"
    return None


def _layout(op: Operation) -> str:
    return NHWC if len(shape_of(op.results[0])) == 4 else PLAIN_LAYOUT


def _flat(value: SSAValue, data_type: int | None = None) -> b.MemoryDesc:
    size = math.prod(shape_of(value))
    return b.MemoryDesc.with_strides((size,), (1,), data_type or data_type_of(value))  # type: ignore[arg-type]


def _scalar() -> b.MemoryDesc:
    return b.MemoryDesc.with_strides((1,), (1,), b.dnnl_f32)


def _multiplier(op: nn.QMulOp) -> float:
    a, c, y = (op.qparams(side) for side in "aby")
    return float(np.float32(np.float32(a.scale) * np.float32(c.scale)) / np.float32(y.scale))


def _pds(op: nn.QMulOp) -> tuple[b.PrimitiveDesc, b.PrimitiveDesc]:
    """t = b - b_zp (f32), then y from a - a_zp with the post-ops times t, m * v + y_zp and
    the clamp."""
    centred = p.reorder_pd(_flat(op.rhs), _flat(op.rhs, b.dnnl_f32), _CENTRED)
    y_zp = float(op.qparams("y").zero_point)
    post_ops = (
        b.PostOp.binary(b.dnnl_binary_mul, (math.prod(shape_of(op.output)),)),
        b.PostOp.eltwise(b.dnnl_eltwise_linear, _multiplier(op), y_zp),
        *clamp_post_ops(op),
    )
    product = p.binary_pd(b.dnnl_binary_sub, _flat(op.lhs), _scalar(), _flat(op.output), post_ops)
    return centred, product


def _reason(op: nn.QMulOp) -> str | None:
    reason = _rule_reason(op)
    if reason is not None:
        return reason
    try:
        for pd in _pds(op):
            if not is_fast(pd.implementation):
                return f"oneDNN offers only {pd.implementation} for it"
    except b.DnnlError as error:
        return f"oneDNN has no primitive for it: {error}"
    return None


def _accepts(op: Operation, target: Target, padding: bool) -> str | None:
    assert isinstance(op, nn.QMulOp)
    return _reason(op)


def _layouts(op: Operation, target: Target) -> Layouts:
    """Operands and result NHWC at rank 4 (the int8 convolutions' order), else plain."""
    return (_layout(op),) * 2, (_layout(op),)


def _types_reason(op: Operation) -> str | None:
    assert isinstance(op, nn.QMulOp)
    return _rule_reason(op) or typed_as(_layout(op))(op)


def _workspace(op: Operation, target: Target) -> int:
    assert isinstance(op, nn.QMulOp)
    scratch = sum(pd.scratchpad_bytes for pd in _pds(op))
    return scratch + 4 * math.prod(shape_of(op.output))


def _implementation(op: Operation) -> str:
    assert isinstance(op, nn.QMulOp)
    return "+".join(pd.implementation for pd in _pds(op))


class _Bound:
    """The two primitives, t between them (the kernel's), the zero points as scalars."""

    def __init__(self, op: Operation):
        assert isinstance(op, nn.QMulOp)
        reason = _reason(op) or _types_reason(op)
        if reason is not None:
            raise BindingRefused(reason)
        centred, product = _pds(op)
        self.t = np.empty(math.prod(shape_of(op.output)), np.float32)
        b_zp = int(op.qparams("b").zero_point)
        values = runtime_values(_CENTRED, {}, {b.DNNL_ARG_SRC: b_zp})
        self.centred = PrimitiveCall(
            Compiled(
                centred, (b.DNNL_ARG_SRC, b.DNNL_ARG_DST), runtime=runtime_descriptors(values)
            ),
            values,
        )
        if not maps_fill(self.centred, b_zp, 0):  # oneDNN v3.2 drops it on some shapes
            raise BindingRefused("oneDNN's reorder drops b's zero point on this shape")
        a_zp = np.float32([op.qparams("a").zero_point])
        self.product = PrimitiveCall(
            Compiled(product, (b.DNNL_ARG_SRC, b.DNNL_ARG_SRC_1, _FACTOR, b.DNNL_ARG_DST)),
            {b.DNNL_ARG_SRC_1: a_zp, _FACTOR: self.t},
        )
        self.types = tuple(p.NUMPY_TYPES[data_type_of(v)] for v in (op.lhs, op.rhs, op.output))  # type: ignore[index]

    def _flat(self, x: np.ndarray, index: int) -> np.ndarray:
        return np.ascontiguousarray(x).reshape(-1).view(self.types[index])

    def _direct(self, out: np.ndarray) -> bool:
        return out.flags.c_contiguous and out.size == self.t.size

    def __call__(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        a, c = inputs
        self.centred.call_on({b.DNNL_ARG_SRC: self._flat(c, 1)}, self.t)
        result = out if self._direct(out) else np.empty(out.shape, out.dtype)
        self.product.call_on({b.DNNL_ARG_SRC: self._flat(a, 0)}, self._flat(result, 2))
        if result is not out:
            out[...] = result

    def on(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> FixedCall:
        a, c = inputs
        if not (self._direct(out) and a.flags.c_contiguous and c.flags.c_contiguous):
            return partial(self, inputs, out)
        first = self.centred.bind_to({b.DNNL_ARG_SRC: self._flat(c, 1)}, self.t)
        second = self.product.bind_to({b.DNNL_ARG_SRC: self._flat(a, 0)}, self._flat(out, 2))

        def run() -> None:
            first()
            second()

        return run


def qmul_zero_points_kernels(family: str) -> list[Kernel]:
    """qmul_zero_points_onednn: a product of two 8-bit tensors of one shape, any zero points."""
    return [
        int8_kernel(
            "qmul_zero_points_onednn",
            nn.QMulOp,
            family,
            _Bound,
            accepts=_accepts,
            layouts=_layouts,
            workspace=_workspace,
            implementation_of=_implementation,
            accepts_types=_types_reason,
            in_place=0,
        )
    ]
