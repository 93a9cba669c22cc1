"""`nn.qmatmul` whose b is given on each call, not packed once: the product of two activations
(attention's Q.K^T and P.V in a transformer quantized by onnxruntime's `quantize_static`, u8 x
u8, batched over heads), as oneDNN's int8 matmul.

oneDNN v3.2's int8 matmul takes s8 weights only. A u8 b is read as s8 by flipping its top bit
(b - 128), its zero point moved by as much, which leaves every product unchanged:

    (a - a_zp) * (b - b_zp) = (a - a_zp) * ((b - 128) - (b_zp - 128))

so the kernel flips b into a buffer of its own on each call (b's bytes, counted in its
workspace beside oneDNN's scratchpad) and gives oneDNN b_zp - 128 as the weights' zero point
(one per tensor: mask 0). An s8 b is read where it lies. Batch axes broadcast as
numpy.matmul's; operands and result plain row-major. The requantization is
qmatmul_onednn's: within one step of the reference where the exact value lies at a half step.

    %y = nn.qmatmul %q, %kt {...} : (tensor<12x197x64xui8>, tensor<12x64x197xui8>)
                                     -> tensor<12x197x197xui8>
    // #nn.kernel<"qmatmul_runtime_b_onednn", ...>: one batched oneDNN matmul per call
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache, partial

import numpy as np
from xdsl.ir import Operation, SSAValue

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import PLAIN_LAYOUT
from nnlayout.dialects.nn import shape_of
from nnlayout.dialects.nn.quantized import numpy_dtype
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn.common import Layouts
from nnlayout.kernels.onednn.primitives import NUMPY_TYPES, Compiled
from nnlayout.kernels.onednn.quantized import DATA_TYPES, INT8, QuantParams, implementation_refusal
from nnlayout.kernels.onednn.quantized_call import (
    PrimitiveCall,
    int8_kernel,
    runtime_descriptors,
    runtime_values,
    typed_as,
)
from nnlayout.kernels.onednn.quantized_kernels import check_packed_claims
from nnlayout.kernels.onednn.quantized_matmul import QMatmulParams, qmatmul_pd
from nnlayout.kernels.registry import BindingRefused, FixedCall, Kernel, Target

SIGN = 0x80  # the bit that turns u8 b into s8 b - 128


def _type(value: SSAValue) -> np.dtype:
    return numpy_dtype(value.type.element_type)  # type: ignore[attr-defined]


def _rule_reason(op: nn.QMatmulOp) -> str | None:
    """What the kernel computes, of `op` (None: all of it)."""
    for what, value in (("a", op.a), ("b", op.b), ("the result", op.output)):
        if DATA_TYPES.get(_type(value)) not in INT8:
            return f"{what} is {_type(value)}; the kernel takes u8 or s8"
    if min(len(shape_of(op.a)), len(shape_of(op.b))) < 2:
        return "an operand of rank 1; the kernel takes matrices"
    if np.unique(np.asarray(op.qparams("b").zero_point)).size > 1:
        return "b has a zero point per column; oneDNN's matmul takes one per tensor"
    if op.bias is not None:
        return "a bias (the kernel adds none to a b given on each call)"
    if op.clamp_min is not None or op.clamp_max is not None:
        return "a clamp (the kernel has no post-op for it yet)"
    if op.activation is not None:
        return "an activation (the kernel has no post-op for it yet)"
    return None


def _spec(op: nn.QMatmulOp) -> tuple[QMatmulParams, QuantParams, int]:
    """`op` in oneDNN's terms, its parameters, and the zero point oneDNN is given for b
    (moved by -128 where b is u8 and flipped)."""
    a, w, y = (op.qparams(side) for side in "aby")
    columns = shape_of(op.b)[-1]
    scales = np.broadcast_to(w.scale, (columns,) if w.per_axis else ()).reshape(-1)
    params = QuantParams(
        float(a.scale),
        tuple(float(s) for s in scales),
        float(y.scale),
        int(a.zero_point),
        int(y.zero_point),
    )
    b_zero_point = int(np.asarray(w.zero_point).reshape(-1)[0])
    b_zero_point -= SIGN if _type(op.b) == np.uint8 else 0
    q = QMatmulParams(
        shape_of(op.a),
        shape_of(op.b),
        False,
        DATA_TYPES[_type(op.a)],
        DATA_TYPES[_type(op.output)],
        w.per_axis,
        params.x_zero_point != 0,
        b_zero_point != 0,
        params.y_zero_point != 0,
    )
    return q, params, b_zero_point


@cache
def runtime_b_pd(q: QMatmulParams) -> b.PrimitiveDesc:
    """The product's primitive descriptor, b plain as given on each call: made once per
    product (dispatch, the workspace, the implementation's name and binding all ask)."""
    return qmatmul_pd(q, None)


def _choice(q: QMatmulParams) -> str | None:
    """Why oneDNN has no fast and exact int8 matmul for `q` with plain b (None: it has)."""
    try:
        return implementation_refusal(runtime_b_pd(q).implementation)
    except b.DnnlError as error:
        return f"oneDNN has no int8 matmul for it: {error}"


def _reason(op: nn.QMatmulOp) -> str | None:
    return _rule_reason(op) or _choice(_spec(op)[0])


def _accepts(op: Operation, target: Target, padding: bool) -> str | None:
    assert isinstance(op, nn.QMatmulOp)
    return _reason(op)


def _flipped_bytes(op: nn.QMatmulOp) -> int:
    """The bytes of the kernel's s8 copy of a u8 b (0 for an s8 b, read where it lies)."""
    return int(np.prod(shape_of(op.b))) if _type(op.b) == np.uint8 else 0


def _layouts(op: Operation, target: Target) -> Layouts:
    """a, b and the result plain (row-major)."""
    return (PLAIN_LAYOUT,) * 2, (PLAIN_LAYOUT,)


def _workspace(op: Operation, target: Target) -> int:
    assert isinstance(op, nn.QMatmulOp)
    return runtime_b_pd(_spec(op)[0]).scratchpad_bytes + _flipped_bytes(op)


def _implementation(op: Operation) -> str:
    assert isinstance(op, nn.QMatmulOp)
    return runtime_b_pd(_spec(op)[0]).implementation


class _Bound:
    """The product's primitive, b bound on each call (flipped into `self.flipped` first
    where it is u8), scales and zero points in memories of their own."""

    def __init__(self, op: Operation):
        assert isinstance(op, nn.QMatmulOp)
        reason = _reason(op) or typed_as(PLAIN_LAYOUT)(op)
        if reason is not None:
            raise BindingRefused(reason)
        check_packed_claims(op, {})  # b is read as given: a packed constant is not its bytes
        q, params, b_zero_point = _spec(op)
        values = runtime_values(q.quantization, *params.runtime(b_zero_point))
        compiled = Compiled(
            runtime_b_pd(q),
            (b.DNNL_ARG_SRC, b.DNNL_ARG_WEIGHTS, b.DNNL_ARG_DST),
            runtime=runtime_descriptors(values),
        )
        self.call = PrimitiveCall(compiled, dict(values))
        self.flipped = np.empty(_flipped_bytes(op), np.uint8) if _flipped_bytes(op) else None
        self.types = NUMPY_TYPES[q.src_type], NUMPY_TYPES[q.dst_type]

    def _weights(self, weights: np.ndarray) -> np.ndarray:
        """b as s8, flipped into the kernel's buffer where it is u8."""
        if self.flipped is None:
            return np.ascontiguousarray(weights).reshape(-1).view(np.int8)
        np.bitwise_xor(weights.reshape(-1).view(np.uint8), SIGN, out=self.flipped)
        return self.flipped.view(np.int8)

    def _sources(self, a: np.ndarray, weights: np.ndarray) -> dict[int, np.ndarray]:
        source = np.ascontiguousarray(a).reshape(-1).view(self.types[0])
        return {b.DNNL_ARG_SRC: source, b.DNNL_ARG_WEIGHTS: self._weights(weights)}

    def _direct(self, out: np.ndarray) -> bool:
        return out.flags.c_contiguous and out.nbytes == self.call.compiled.nbytes(b.DNNL_ARG_DST)

    def __call__(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        a, weights = inputs
        if self._direct(out):
            self.call.call_on(self._sources(a, weights), out.reshape(-1).view(self.types[1]))
            return
        result = np.empty(out.shape, self.types[1])
        self.call.call_on(self._sources(a, weights), result.reshape(-1))
        out[...] = result.view(out.dtype)

    def on(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> FixedCall:
        a, weights = inputs
        if not (a.flags.c_contiguous and weights.flags.c_contiguous and self._direct(out)):
            return partial(self, inputs, out)
        bound = self.call.bind_to(self._sources(a, weights), out.reshape(-1).view(self.types[1]))
        if self.flipped is None:
            return bound
        return _flipping(weights.reshape(-1).view(np.uint8), self.flipped, bound)


def _flipping(weights: np.ndarray, flipped: np.ndarray, run: Callable[[], None]) -> FixedCall:
    """`run` after b's bytes are flipped into `flipped` (where `run` reads them)."""

    def call() -> None:
        np.bitwise_xor(weights, SIGN, out=flipped)
        run()

    return call


def qmatmul_runtime_b_kernels(family: str) -> list[Kernel]:
    """qmatmul_runtime_b_onednn: an int8 product whose b is given on each call."""
    return [
        int8_kernel(
            "qmatmul_runtime_b_onednn",
            nn.QMatmulOp,
            family,
            _Bound,
            accepts=_accepts,
            layouts=_layouts,
            workspace=_workspace,
            implementation_of=_implementation,
            accepts_types=typed_as(PLAIN_LAYOUT),
        )
    ]
