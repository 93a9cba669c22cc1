"""`nn.dynamic_quantize` (DynamicQuantizeLinear's y: QuantizeLinear with a scale and a zero
point computed at run time, what onnxruntime's `quantize_dynamic` puts before every
MatMulInteger) as oneDNN's binary division, as `quantize_onednn` computes QuantizeLinear
(quantized_reorder.py):

    y = saturate(round_half_even(x / scale) + zero_point)

x / scale is oneDNN's binary division by a one-element f32 array (a correctly rounded f32
division, as numpy's), then post-ops round (half to even) and a binary add of a one-element
f32 array holding the zero point (exact on those integers), converted with saturation into
u8/s8: the reference kernel's bytes. The scale and the zero point are rank-0 operands, new on
each run: the kernel copies them into the two arrays its bound primitive reads.

oneDNN converts NaN to 0, the reference to the zero point: a run whose scale is not finite
(DynamicQuantizeLinear's scale of an x holding a NaN or an infinity is NaN or infinite) or 0
(x's range underflowing f32: 0 / 0 is NaN), or whose x . x is not finite (`all_finite`: a NaN
or an infinity beside a scale from elsewhere) runs the reference kernel. Where the scale is
`nn.dynamic_scale` of the very values quantized (`scaled_by_own_range`: the importer's form
of DynamicQuantizeLinear), a finite scale already says x is finite, and the x . x pass, a
read of x as long as the division's, is left out. x and y plain, of any rank (one flat run of
elements); binding refuses values typed otherwise.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
from xdsl.ir import Operation, SSAValue

from nnlayout.dialects import nn
from nnlayout.dialects.compute import (
    ComputeOp,
    last_writers,
    operands_outside,
    unwritten_between,
)
from nnlayout.dialects.kernel_attr import PLAIN_LAYOUT
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import MemoryDesc
from nnlayout.kernels.onednn.common import Layouts, is_fast
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.onednn.quantized import INT8, data_type_of
from nnlayout.kernels.onednn.quantized_call import (
    PrimitiveCall,
    all_finite,
    int8_kernel_fields,
    typed_as,
)
from nnlayout.kernels.reference_integer import dynamic_quantize
from nnlayout.kernels.registry import BindingRefused, FixedCall, Kernel, Target

_ZERO_POINT = b.PostOp.binary_arg(1)  # the round post-op is index 0, the add index 1


def _result_type(op: nn.DynamicQuantizeOp) -> int | None:
    return data_type_of(op.output)


def _pd(op: nn.DynamicQuantizeOp) -> b.PrimitiveDesc:
    """x (flat) divided by a one-element scale, rounded, the zero point added, saturated:
    one descriptor per size and result type (dispatch, binding, the workspace and the
    implementation's name all ask for it)."""
    return _division_pd(math.prod(shape_of(op.input)), _result_type(op))  # type: ignore[arg-type]


@functools.cache
def _division_pd(size: int, result_type: int) -> b.PrimitiveDesc:
    one = MemoryDesc.with_strides((1,), (1,), b.dnnl_f32)
    return p.binary_pd(
        b.dnnl_binary_div,
        MemoryDesc.with_strides((size,), (1,), b.dnnl_f32),
        one,
        MemoryDesc.with_strides((size,), (1,), result_type),
        (
            b.PostOp.eltwise(b.dnnl_eltwise_round),
            b.PostOp.binary(b.dnnl_binary_add, (1,)),
        ),
    )


def _refusal(op: Operation) -> str | None:
    assert isinstance(op, nn.DynamicQuantizeOp)
    if _result_type(op) not in INT8:
        return "the result is not u8 or s8"
    try:
        implementation = _pd(op).implementation
    except b.DnnlError as error:
        return f"oneDNN has no primitive for it: {error}"
    return None if is_fast(implementation) else f"oneDNN offers only {implementation} for it"


def scaled_by_own_range(op: nn.DynamicQuantizeOp) -> bool:
    """Whether `op`'s scale is `nn.dynamic_scale` of the values `op` quantizes, or of their
    `nn.dynamic_range`: of its very input (tensors), or, in a planned function, of the buffer
    `op` reads, which nothing writes in between. That scale is NaN or infinite wherever x
    holds a NaN or an infinity (min and max propagate them)."""
    found = operands_outside(op)
    if found is None:
        scaled = op.scale.owner
        if not isinstance(scaled, nn.DynamicScaleOp):
            return False
        source = scaled.input
        if isinstance(source.owner, nn.DynamicRangeOp):
            source = source.owner.input
        return source is op.input
    compute, outside = found
    x = outside[op.input]
    first = _writer(compute, outside[op.scale], nn.DynamicScaleOp)
    if first is None:
        return False
    if first.ins[0] is not x:  # a scale of a range: the range's input
        first = _writer(first, first.ins[0], nn.DynamicRangeOp) or first
    return first.ins[0] is x and unwritten_between(first, compute, x)


def _writer(compute: ComputeOp, buffer: SSAValue, kind: type[Operation]) -> ComputeOp | None:
    """The one nn.compute that last wrote all of `buffer` before `compute`, where its op is of
    `kind`."""
    writers = last_writers(compute, buffer)
    if writers is None or len(writers) != 1 or not isinstance(writers[0].inner, kind):
        return None
    return writers[0]


class _Bound:
    """The division bound once, with the scale and zero point arrays it reads."""

    def __init__(self, op: Operation):
        reason = _refusal(op)
        if reason is not None:
            raise BindingRefused(reason)
        assert isinstance(op, nn.DynamicQuantizeOp)
        self.op = op
        self.scale = np.ones(1, np.float32)
        self.zero_point = np.zeros(1, np.float32)
        args = (b.DNNL_ARG_SRC, b.DNNL_ARG_SRC_1, _ZERO_POINT, b.DNNL_ARG_DST)
        self.call = PrimitiveCall(
            Compiled(_pd(op), args), {b.DNNL_ARG_SRC_1: self.scale, _ZERO_POINT: self.zero_point}
        )
        self.dtype = p.NUMPY_TYPES[_result_type(op)]  # type: ignore[index]
        self.own_range = scaled_by_own_range(op)

    def _exact(self, inputs: Sequence[np.ndarray]) -> bool:
        """Copies the run's scale and zero point in; whether oneDNN gives the reference's
        bytes on this run (x and the scale finite)."""
        x, scale, zero_point = inputs
        self.scale[0] = scale
        self.zero_point[0] = zero_point
        divisor = self.scale[0]
        finite = bool(np.isfinite(divisor)) and divisor != 0
        return finite and (self.own_range or all_finite(x))

    def _reference(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        out[...] = dynamic_quantize(self.op, inputs).reshape(out.shape)  # type: ignore[arg-type]

    def _direct(self, x: np.ndarray, out: np.ndarray) -> bool:
        return x.flags.c_contiguous and out.flags.c_contiguous and out.dtype == self.dtype

    def __call__(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        x = inputs[0]
        if not (self._exact(inputs) and self._direct(x, out)):
            self._reference(inputs, out)
            return
        self.call.call_on({b.DNNL_ARG_SRC: x.reshape(-1)}, out.reshape(-1))

    def on(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> FixedCall:
        if not self._direct(inputs[0], out):
            return lambda: self(inputs, out)
        execute = self.call.bind_to({b.DNNL_ARG_SRC: inputs[0].reshape(-1)}, out.reshape(-1))
        exact, reference = self._exact, self._reference

        def run() -> None:
            if exact(inputs):
                execute()
            else:
                reference(inputs, out)

        return run


def _layouts(op: Operation, target: Target) -> Layouts:
    return (PLAIN_LAYOUT,) * 3, (PLAIN_LAYOUT,)


def dynamic_quantize_kernels(family: str) -> list[Kernel]:
    """dynamic_quantize_onednn."""
    fields = int8_kernel_fields(
        _Bound,
        accepts=lambda op, target, padding: _refusal(op),
        layouts=_layouts,
        workspace=lambda op, target: _pd(op).scratchpad_bytes,  # type: ignore[arg-type]
        implementation_of=lambda op: _pd(op).implementation,  # type: ignore[arg-type]
    )
    return [
        Kernel(
            "dynamic_quantize_onednn",
            nn.DynamicQuantizeOp,
            family,
            accepts_types=typed_as(PLAIN_LAYOUT),
            **fields,  # type: ignore[arg-type]
        )
    ]
