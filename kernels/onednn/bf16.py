"""bf16 convolutions as oneDNN's convolution primitive at array level, f32 <-> bf16
conversions, and the oneDNN family's `nn.cast` kernel (`cast_kernel`). The family's own
convolutions, matrix products, pooling, element-wise, binary, concat and batch norm kernels
compute bf16 ops themselves (`common.float_refusal`, `ConvGeometry.data_type`), for
`convert-to-bf16`.

bf16 keeps float32's exponent and 8 bits of its significand (7 stored): a value converted
from f32 (oneDNN's reorder rounds to nearest even) is within 2^-8 of it, relatively. A bf16
convolution reads bf16 source and weights, accumulates in f32 (AVX512_BF16's vdpbf16ps, or
AMX), adds an f32 bias and writes bf16 (or f32) results: its error against the f32
convolution comes from the rounding of its operands and of its result, about 2^-8 of the
result's scale (tests/kernels/test_onednn_bf16.py states the measured figure).

oneDNN has fast bf16 code only where the CPU has AVX512_BF16 (or AMX); elsewhere it
would emulate it or run its reference code, so `bf16_refusal` names the reason and the
caller keeps f32. numpy has no bf16 type: bf16 buffers are arrays of ml_dtypes' bfloat16.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import ANY_LAYOUT
from nnlayout.dialects.layout import buffer_bytes
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import MemoryDesc
from nnlayout.kernels.onednn.common import bf16_refusal, reorder_array
from nnlayout.kernels.onednn.convolution import ConvGeometry
from nnlayout.kernels.onednn.primitives import NUMPY_TYPES, Compiled
from nnlayout.kernels.onednn.quantized_call import PrimitiveCall
from nnlayout.kernels.reference_bf16 import cast
from nnlayout.kernels.registry import FixedCall, Kernel, one_layout_refusal

__all__ = ["Bf16Conv", "bf16_conv_pd", "bf16_refusal", "cast_kernel", "from_bf16", "to_bf16"]

ANY = b.dnnl_format_tag_any
X = 2  # dnnl_x = dnnl_a


def to_bf16(array: np.ndarray) -> np.ndarray:
    """f32 `array` in bf16 (ml_dtypes' bfloat16), rounded to nearest even by oneDNN's reorder."""
    x = np.ascontiguousarray(array, np.float32)
    strides = [int(s // 4) for s in x.strides] if x.ndim else [1]
    shape = x.shape or (1,)
    out = reorder_array(
        x,
        MemoryDesc.with_strides(shape, strides),
        MemoryDesc.with_strides(shape, strides, b.dnnl_bf16),
    )
    return out.reshape(x.shape)


def from_bf16(values: np.ndarray) -> np.ndarray:
    """The f32 values of bf16 `values` (exact: bf16 is f32's upper half)."""
    return np.asarray(values).astype(np.float32)


def bf16_conv_pd(
    g: ConvGeometry,
    src: int = ANY,
    weights: int = ANY,
    dst: int = ANY,
    dst_type: int = b.dnnl_bf16,
    data_type: int = b.dnnl_bf16,
) -> b.PrimitiveDesc:
    """The bf16 convolution's primitive descriptor (an f32 bias; `dst_type` bf16 or f32);
    with `data_type` f32 (and `dst_type`), the f32 one, for comparisons."""
    bias = MemoryDesc.with_tag((g.dst[1],), X) if g.bias else None
    return p.convolution_pd(
        MemoryDesc.with_tag(g.src, src, data_type),
        MemoryDesc.with_tag(g.weights, weights, data_type),
        bias,
        MemoryDesc.with_tag(g.dst, dst, dst_type),
        g.strides,
        g.dilations,
        g.padding_l,
        g.padding_r,
        g.post_ops,
    )


class Bf16Conv:
    """A bf16 convolution bound once: f32 weights (plain OIHW, or g, o, i, h, w) converted
    and packed once into the bf16 format oneDNN chose, the bias kept f32. `formats` are the
    tags to ask for (ANY: oneDNN's choice, `src_md`/`dst_md`); `__call__(x, out)` runs on
    arrays of those bytes (bf16 as ml_dtypes' bfloat16). With `data_type` f32 (and `dst_type`
    f32) it is the f32 convolution on the formats oneDNN chooses for f32 (benchmarks compare)."""

    def __init__(
        self,
        g: ConvGeometry,
        weights: np.ndarray,
        bias: np.ndarray | None,
        formats: tuple[int, int, int] = (ANY, ANY, ANY),
        dst_type: int = b.dnnl_bf16,
        data_type: int = b.dnnl_bf16,
    ):
        self.g, self.dst_type, self.data_type = g, dst_type, data_type
        self.pd = bf16_conv_pd(g, *formats, dst_type=dst_type, data_type=data_type)
        args = (b.DNNL_ARG_SRC, b.DNNL_ARG_WEIGHTS, b.DNNL_ARG_DST)
        args += (b.DNNL_ARG_BIAS,) if bias is not None else ()
        self.compiled = Compiled(self.pd, args)
        plain = 6 if len(g.weights) == 5 else 5  # dnnl_goihw, dnnl_oihw
        self.arrays = {
            b.DNNL_ARG_WEIGHTS: reorder_array(
                weights.astype(np.float32),
                MemoryDesc.with_tag(g.weights, plain),
                self.pd.md(b.dnnl_query_weights_md),
            )
        }
        if bias is not None:
            self.arrays[b.DNNL_ARG_BIAS] = np.ascontiguousarray(bias, np.float32)
        self.scratchpad = np.empty(self.compiled.scratchpad_bytes, np.uint8)

    @property
    def implementation(self) -> str:
        return self.pd.implementation

    @property
    def src_md(self) -> MemoryDesc:
        return self.pd.md(b.dnnl_query_src_md)

    @property
    def dst_md(self) -> MemoryDesc:
        return self.pd.md(b.dnnl_query_dst_md)

    def new_output(self) -> np.ndarray:
        dtype = NUMPY_TYPES[self.dst_type]
        return np.empty(self.dst_md.size // dtype.itemsize, dtype)

    def __call__(self, x: np.ndarray, out: np.ndarray) -> None:
        self.compiled({**self.arrays, b.DNNL_ARG_SRC: x, b.DNNL_ARG_DST: out}, self.scratchpad)

    def run_plain(self, x: np.ndarray) -> np.ndarray:
        """The convolution of f32 NCHW `x` (converted to bf16 in the primitive's format),
        its result f32 NCHW."""
        plain = MemoryDesc.with_tag(self.g.src, 5)
        src = reorder_array(x.astype(np.float32), plain, self.src_md)
        out = self.new_output()
        self(src, out)
        return reorder_array(out, self.dst_md, MemoryDesc.with_tag(self.g.dst, 5)).reshape(
            self.g.dst
        )


def _cast(op: Operation, inputs: Sequence[np.ndarray]) -> np.ndarray:
    return cast(op, inputs)  # type: ignore[arg-type]


# The element types oneDNN's reorder converts between here, by nn's element type name.
_REORDERED = {"f32": b.dnnl_f32, "bf16": b.dnnl_bf16}


class _BoundCast:
    """An f32 <-> bf16 `nn.cast` bound once: oneDNN's reorder over the elements of the
    physical buffer as one row (the conversion is element-wise, so any layout; padding lanes
    hold 0 and stay 0), writing straight into the destination. ml_dtypes' conversion took
    0.66 ms on a 1x3x224x224 input, the reorder 0.014 ms (jit:uni, busy machine). Like
    oneDNN's bf16 kernels, it treats f32 subnormals (below 1.2e-38) as zero. Arrays it
    cannot take as they are (another type, a strided view) get numpy's conversion, of the
    source with its subnormals made zero likewise: one kernel, one result, whichever path."""

    def __init__(self, op: Operation):
        types = [str(v.type.element_type) for v in (*op.operands, *op.results)]  # type: ignore[attr-defined]
        self.op = op
        self.call: PrimitiveCall | None = None
        if all(t in _REORDERED for t in types) and types[0] != types[1]:
            count = buffer_bytes(op.operands[0].type) // (2 if types[0] == "bf16" else 4)
            given, wanted = (MemoryDesc.with_strides((count,), (1,), _REORDERED[t]) for t in types)
            reorder = Compiled(p.reorder_pd(given, wanted), (b.DNNL_ARG_SRC, b.DNNL_ARG_DST))
            self.call = PrimitiveCall(reorder, {})

    def _fits(self, x: np.ndarray, arg: int) -> np.ndarray | None:
        """`x` as the reorder's flat `arg` array (None: not C-contiguous, or not its bytes)."""
        assert self.call is not None
        compiled = self.call.compiled
        if not x.flags.c_contiguous or x.dtype != compiled.dtype(arg):
            return None
        return x.reshape(-1) if x.nbytes == compiled.nbytes(arg) else None

    def _arrays(self, x: np.ndarray, out: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        if self.call is None:
            return None
        source, destination = self._fits(x, b.DNNL_ARG_SRC), self._fits(out, b.DNNL_ARG_DST)
        return None if source is None or destination is None else (source, destination)

    def __call__(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        arrays = self._arrays(np.asarray(inputs[0]), out)
        if arrays is None:
            source = np.asarray(inputs[0])
            if self.call is not None and source.dtype == np.float32:  # as the reorder does
                tiny = np.abs(source) < np.finfo(np.float32).tiny
                source = np.where(tiny, np.copysign(np.float32(0), source), source)
            out[...] = cast(self.op, [source]).reshape(out.shape)
            return
        assert self.call is not None
        self.call.call_on({b.DNNL_ARG_SRC: arrays[0]}, arrays[1])

    def on(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> FixedCall:
        arrays = self._arrays(np.asarray(inputs[0]), out)
        if arrays is None:
            return partial(self, inputs, out)
        assert self.call is not None
        return self.call.bind_to({b.DNNL_ARG_SRC: arrays[0]}, arrays[1])


def _cast_implementation(op: Operation) -> str:
    call = _BoundCast(op).call
    return "numpy (ml_dtypes)" if call is None else call.compiled.pd.implementation


def _cast_types_reason(op: Operation) -> str | None:
    return one_layout_refusal(op, [0])


def cast_kernel(family: str) -> Kernel:
    """`nn.cast` in `family` (oneDNN's): the element-wise conversion of the physical array in
    whatever layout operand 0 has (padding lanes hold 0 and stay 0), so that a blocked bf16
    region's boundary costs no reorder to plain and back: oneDNN's reorder bound once
    (`_BoundCast`), or numpy's (ml_dtypes') conversion where the arrays do not suit it; both
    round to nearest even. The casts sit at a function's inputs and outputs and around ops
    kept f32."""
    return Kernel(
        "cast_onednn",
        nn.CastOp,
        family,
        _cast,
        layouts=lambda op, target: ((ANY_LAYOUT,), (ANY_LAYOUT,)),
        accepts_types=_cast_types_reason,
        bf16_data=True,
        prepare=lambda op, session: _BoundCast(op),
        implementation_of=_cast_implementation,
    )
