"""int8 matrix products with ONNX QLinearMatMul semantics (and an optional bias, i32 or f32
in the accumulator's units, as nn.qmatmul has) as oneDNN's matmul primitive:

    y = saturate(round_half_even((sum_k (a - a_zp) * (b - b_zp)) + bias_i32)
                                 * a_scale * b_scale[n] / y_scale) + y_zp)

a is u8 or s8 of rank 2 or more (its leading axes one axis of rows: `qmatmul_spec`), b an s8
constant (K, N), its scales per tensor or per column n, its zero point per tensor (oneDNN
v3.2's matmul takes a weights zero point of mask 0 only; `qmatmul_refusal` names the rest).
As for convolutions (quantized.py) the bias is given in f32, prescaled by a_scale *
b_scale[n], and b is packed once into the format oneDNN chose (`format_tag::any`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.attributes import Quantization
from nnlayout.kernels.onednn.binding import MemoryDesc
from nnlayout.kernels.onednn.common import reorder_array, row_major_strides
from nnlayout.kernels.onednn.primitives import NUMPY_TYPES, Compiled
from nnlayout.kernels.onednn.quantized import DATA_TYPES, INT8, QuantParams
from nnlayout.kernels.onednn.quantized_call import (
    BoundCall,
    PrimitiveCall,
    runtime_descriptors,
    runtime_values,
)

ANY = b.dnnl_format_tag_any


@dataclass(frozen=True)
class QMatmulParams:
    """An int8 product: shapes of a and b (numpy.matmul's: batch axes broadcast; b (K, N)
    where it is packed), whether it has a bias, the data types of a and y, per-column scales
    of b, which zero points are non-zero."""

    a: tuple[int, ...]
    b: tuple[int, ...]
    bias: bool
    src_type: int = b.dnnl_u8
    dst_type: int = b.dnnl_u8
    channel_scales: bool = True
    src_zero_point: bool = True
    weights_zero_point: bool = False
    dst_zero_point: bool = True
    post_ops: tuple[b.PostOp, ...] = ()  # on the real result, before y's scale and zero point

    @property
    def rank(self) -> int:
        return max(len(self.a), len(self.b))

    @property
    def src(self) -> tuple[int, ...]:
        return (1,) * (self.rank - len(self.a)) + self.a

    @property
    def weights(self) -> tuple[int, ...]:
        return (1,) * (self.rank - len(self.b)) + self.b

    @property
    def dst(self) -> tuple[int, ...]:
        batch = np.broadcast_shapes(self.src[:-2], self.weights[:-2])
        return (*batch, self.src[-2], self.weights[-1])

    @property
    def quantization(self) -> Quantization:
        column = 1 << (self.rank - 1) if self.channel_scales else 0
        scales = ((b.DNNL_ARG_SRC, 0), (b.DNNL_ARG_WEIGHTS, column))
        scales += ((b.DNNL_ARG_DST, 0),) if self.dst_type in INT8 else ()
        wanted = (
            (b.DNNL_ARG_SRC, self.src_zero_point),
            (b.DNNL_ARG_WEIGHTS, self.weights_zero_point),
            (b.DNNL_ARG_DST, self.dst_zero_point and self.dst_type in INT8),
        )
        return Quantization(scales, tuple((arg, 0) for arg, on in wanted if on))


def as_rows(shape: tuple[int, ...]) -> tuple[int, int]:
    """A plain row-major operand `a` of any rank >= 2 as oneDNN's one product sees it:
    (rows, K), its leading axes one axis of rows (the same bytes)."""
    return math.prod(shape[:-1]), shape[-1]


def qmatmul_refusal(
    a_type: np.dtype, b_type: np.dtype, b_zero_point: np.ndarray, a_rank: int, b_rank: int
) -> str | None:
    """Why oneDNN cannot run a QLinearMatMul of these types and zero points (None: it can)."""
    if DATA_TYPES.get(np.dtype(a_type)) not in INT8:
        return f"a is {np.dtype(a_type)}; oneDNN's int8 matmul takes u8 or s8"
    if np.dtype(b_type) != np.int8:
        return f"b is {np.dtype(b_type)}; oneDNN's int8 matmul takes s8 weights"
    if np.size(b_zero_point) > 1 and np.any(np.asarray(b_zero_point) != b_zero_point.flat[0]):
        return "b has a zero point per column; oneDNN's matmul takes one per tensor"
    if a_rank < 2 or b_rank != 2:
        return f"a of rank {a_rank} and b of rank {b_rank}; the kernel takes a of rank >= 2, b 2-D"
    return None


def qmatmul_pd(q: QMatmulParams, weights: int | None = ANY) -> b.PrimitiveDesc:
    """The product's primitive descriptor: plain a and y, b in `weights` (ANY: oneDNN's
    format, packed once; None: plain row-major, as given on each call)."""
    bias = None
    if q.bias:
        shape = (1,) * (q.rank - 1) + (q.b[-1],)
        bias = MemoryDesc.with_strides(shape, row_major_strides(shape))
    return int8_matmul_pd(
        q.src, q.src_type, (q.weights, weights), bias, q.dst, q.dst_type, q.quantization, q.post_ops
    )


def int8_matmul_pd(
    a: tuple[int, ...],
    src_type: int,
    weights: tuple[tuple[int, ...], int | None],
    bias: MemoryDesc | None,
    dst: tuple[int, ...],
    dst_type: int,
    quantization: Quantization,
    post_ops: tuple[b.PostOp, ...] = (),
) -> b.PrimitiveDesc:
    """oneDNN's matmul of a plain row-major `a` of `src_type`, s8 b of `weights` (shape,
    format tag; None: plain row-major), `bias` and a plain row-major result of `dst_type`,
    with `quantization` (qmatmul's and matmul_integer's setup) and `post_ops` (oneDNN applies
    them after the source and weights scales and the bias, before the result's scale and
    zero point)."""
    shape, tag = weights
    return p.matmul_pd(
        MemoryDesc.with_strides(a, row_major_strides(a), src_type),
        MemoryDesc.with_strides(shape, row_major_strides(shape), b.dnnl_s8)
        if tag is None
        else MemoryDesc.with_tag(shape, tag, b.dnnl_s8),
        bias,
        MemoryDesc.with_strides(dst, row_major_strides(dst), dst_type),
        post_ops,
        quantization,
    )


class QMatmul(PrimitiveCall):
    """An int8 product bound once: b packed (its zero point given at execution; None: by a
    later `pack`), the bias prescaled to f32, scales and zero points in memories of their
    own. `__call__(a, out)` runs on plain row-major arrays, `bind(a, out)` on those very
    arrays."""

    def __init__(
        self,
        q: QMatmulParams,
        weights: np.ndarray | None,
        bias: np.ndarray | None,
        params: QuantParams,
        w_zero_point: int = 0,
    ):
        self.q = q
        self.pd = qmatmul_pd(q)
        values = runtime_values(q.quantization, *params.runtime(w_zero_point))
        args = (b.DNNL_ARG_SRC, b.DNNL_ARG_WEIGHTS, b.DNNL_ARG_DST)
        args += (b.DNNL_ARG_BIAS,) if q.bias else ()
        super().__init__(Compiled(self.pd, args, runtime=runtime_descriptors(values)), dict(values))
        self.params = params
        self.packed_bytes = self.pd.md(b.dnnl_query_weights_md).size
        if weights is not None:
            self.pack(weights, bias)

    def pack(self, weights: np.ndarray, bias: np.ndarray | None) -> None:
        """Packs s8 `weights` (K, N) into the primitive's format and prescales the
        `bias` (i32 or f32) to f32 (bias * a_scale * b_scale[n])."""
        q = self.q
        if q.bias != (bias is not None):
            raise ValueError(f"the product {'has' if q.bias else 'has no'} bias")
        given = MemoryDesc.with_strides(q.weights, row_major_strides(q.weights), b.dnnl_s8)
        self.arrays[b.DNNL_ARG_WEIGHTS] = reorder_array(
            weights, given, self.pd.md(b.dnnl_query_weights_md)
        )
        if bias is not None:
            params = self.params
            scale = np.float32(params.x_scale) * np.asarray(params.w_scale, np.float32)
            self.arrays[b.DNNL_ARG_BIAS] = (bias.astype(np.float32) * scale).astype(np.float32)

    @property
    def implementation(self) -> str:
        return self.pd.implementation

    def __call__(self, a: np.ndarray, out: np.ndarray) -> None:
        self.call_on({b.DNNL_ARG_SRC: a.reshape(-1)}, out.reshape(-1))

    def bind(self, a: np.ndarray, out: np.ndarray) -> BoundCall:
        return self.bind_to({b.DNNL_ARG_SRC: a.reshape(-1)}, out.reshape(-1))

    def run(self, a: np.ndarray) -> np.ndarray:
        out = np.empty(self.q.dst, NUMPY_TYPES[self.q.dst_type])
        self(np.ascontiguousarray(a), out)
        return out
