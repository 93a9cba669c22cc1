"""int8 convolutions with ONNX QLinearConv semantics as oneDNN's convolution primitive.

ONNX (QLinearConv; ConvInteger without the requantization):

    y = saturate(round_half_even((sum((x - x_zp) * (w - w_zp)) + bias_i32)
                                 * x_scale * w_scale[oc] / y_scale) + y_zp)

(nn.qconv2d's bias may also be f32 in the accumulator's units: the same formula.)

oneDNN v3 (attributes.py) computes conv(x - x_zp, w) exactly in s32 (VNNI/AMX). With its
scales it would then compute in f32 `acc * x_scale * w_scale[oc] + bias` (the bias
prescaled), divide by y_scale, add y_zp, round half to even and saturate: other f32
roundings than onnxruntime's, which put a value near a half step on the other side of it now
and then. So the kernels (`QConvParams.multiplied`) give oneDNN no scales and the bias as it
is (f32, exact below 2**24), and requantize by post-ops as onnxruntime's QLinearConv does
(mlas's MlasRequantizeOutput): float32(acc + bias) times the channel's multiplier
float32(float32(x_scale * w_scale[oc]) / y_scale) (a binary post-op, one f32 rounding),
rounded half to even (an eltwise post-op), then y_zp added (an integer: exact) and
saturated (`multiplier_post_ops`); onnxruntime's own rounding and oneDNN's agree bit for
bit (tests/frontends/test_int8_requantization.py). ONNX's reference (exact arithmetic) is
within one step of it.

What oneDNN v3.2 refuses, and so `qconv_refusal` does (the op then falls back to the
reference kernel with that reason): a weights zero point != 0 (its convolutions have none;
ORT's quantize_static quantizes weights symmetrically), per-channel zero points of x or y
(oneDNN's convolutions take one per tensor), sources other than u8/s8, weights other than
s8. Scales are per tensor, or per output channel for the weights.

Padding: ONNX's reference subtracts x_zp before padding with zeros, i.e. the halo holds x_zp
in u8 terms; oneDNN's zero-point compensation treats its padding the same way (tested with
x_zp != 0 on padded convolutions).

`nn.qconv2d_add` (a qconv2d and the qadd after it, fused by `fuse-post-ops`) is the same
primitive with post-ops (`sum_post_ops`): c requantized as above and clipped to its range,
then the add as onnxruntime's QLinearAdd computes it on raw integers, the addend read by
oneDNN's `sum` from the destination (which holds it: in place, or copied there first).

Weights are packed once (`QConv`: at load) by oneDNN's reorder from plain s8 OIHW into the
format the primitive chose, which carries the s8-source compensation (sum of weights times
128 per output channel, for VNNI's u8 x s8 product) and the zero-point compensation
(sum of weights per output channel) after the weights: `packed_bytes` counts them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from nnlayout.dialects.nn import QParams
from nnlayout.dialects.nn.base import numpy_dtype as value_dtype
from nnlayout.dialects.nn.quantized import numpy_dtype
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.attributes import Quantization
from nnlayout.kernels.onednn.binding import MemoryDesc
from nnlayout.kernels.onednn.common import reorder_array
from nnlayout.kernels.onednn.convolution import ConvGeometry
from nnlayout.kernels.onednn.primitives import NUMPY_TYPES, Compiled
from nnlayout.kernels.onednn.quantized_call import (
    BoundCall,
    PrimitiveCall,
    runtime_descriptors,
    runtime_values,
)

ANY = b.dnnl_format_tag_any
NCHW = 5  # dnnl_nchw = dnnl_abcd (and oihw)
GOIHW = 6  # dnnl_goihw = dnnl_abcde
X = 2  # dnnl_x = dnnl_a
NC = 3  # dnnl_nc = dnnl_ab
DATA_TYPES = {np.dtype(t): d for d, t in NUMPY_TYPES.items() if d != b.dnnl_bf16}
INT8 = (b.dnnl_u8, b.dnnl_s8)


def data_type_of(value: object) -> int | None:
    """The dnnl data type of a value's elements (u8, s8, f32, ...), None for another."""
    element_type = getattr(getattr(value, "type", None), "element_type", None)
    return DATA_TYPES.get(value_dtype(element_type))  # type: ignore[arg-type]


@dataclass(frozen=True)
class QConvParams:
    """An int8 convolution: its geometry (without a bias: the f32 bias is `bias`), the
    data types of source and destination (dnnl_u8/s8; the destination may be s32 or f32:
    ConvInteger, or a dequantized result), whether the weights' scales are per output
    channel, and which of source and destination have a zero point. Hashable: it keys the
    primitive cache."""

    geometry: ConvGeometry
    src_type: int = b.dnnl_u8
    dst_type: int = b.dnnl_u8
    channel_scales: bool = True
    src_zero_point: bool = True
    dst_zero_point: bool = True
    multiplied: bool = False  # requantized by `multiplier_post_ops`, not oneDNN's scales

    @property
    def quantization(self) -> Quantization:
        g = self.geometry
        if self.multiplied:
            points = ((b.DNNL_ARG_SRC, 0),) if self.src_zero_point else ()
            return Quantization((), points + ((b.DNNL_ARG_DST, 0),) * self.dst_zero_point)
        # Weights (o, i, h, w): dim 0 is the output channel; grouped (g, o, i, h, w): both.
        weights_mask = (0b11 if len(g.weights) == 5 else 0b1) if self.channel_scales else 0
        scales = ((b.DNNL_ARG_SRC, 0), (b.DNNL_ARG_WEIGHTS, weights_mask))
        if self.dst_type in INT8:
            scales += ((b.DNNL_ARG_DST, 0),)
        zero_points = ((b.DNNL_ARG_SRC, 0),) if self.src_zero_point else ()
        if self.dst_zero_point and self.dst_type in INT8:
            zero_points += ((b.DNNL_ARG_DST, 0),)
        return Quantization(scales, zero_points)


def multiplier_post_ops(
    dst: tuple[int, ...], y_zero_point: int, low: int | None, high: int | None
) -> tuple[b.PostOp, ...]:
    """The post-ops that requantize as onnxruntime's QLinearConv does (mlas's
    MlasRequantizeOutput), for a convolution without oneDNN scales and with its bias
    unscaled (exact in f32 below 2**24): the sum plus bias, one f32 rounding, times the
    channel's multiplier float32(float32(x_scale * w_scale[oc]) / y_scale) (a binary post-op,
    `multipliers`), rounded half to even, clipped to [low, high] less y's zero point where
    the clamp gives them; oneDNN then adds y's zero point (an integer: exact) and saturates.
    Without a zero point the rounding is oneDNN's conversion to the integer type (round
    half to even; a clip to integer bounds commutes with it), and no post-op.
    oneDNN's scales would multiply by x_scale * w_scale[oc], add the prescaled bias and
    divide by y_scale: other f32 roundings, which put a value near a half step on the other
    side of it now and then, one step off onnxruntime, and that step grows layer by layer."""
    channels = (1, dst[1], *(1 for _ in dst[2:]))
    ops: tuple[b.PostOp, ...] = (b.PostOp.binary(b.dnnl_binary_mul, channels),)
    if y_zero_point != 0:  # else oneDNN's own conversion rounds half to even, clip or not
        ops += (b.PostOp.eltwise(b.dnnl_eltwise_round),)
    if low == y_zero_point and high is None:
        return (*ops, b.PostOp.eltwise(b.dnnl_eltwise_relu, 0.0))
    return (*ops, *clip_post_ops(low, high, y_zero_point))


def activation_post_ops(
    dst: tuple[int, ...],
    activation: tuple[b.PostOp, ...],
    y: QParams,
    low: int | None,
    high: int | None,
) -> tuple[b.PostOp, ...]:
    """The post-ops of an `nn.qconv2d` with an activation (a `multiplied` convolution by
    x_scale * w_scale[oc], its real result; no zero point on y: the linear adds it): the
    sum plus bias times the channel's real scale (`multipliers` with y_scale 1), the
    activation's eltwise, then x / y_scale + y_zp (a multiplication by the reciprocal, where
    quantize divides: a value within an f32 rounding of a half step may round the other
    way), clipped to the clamp; oneDNN's conversion rounds half to even and saturates."""
    channels = (1, dst[1], *(1 for _ in dst[2:]))
    inverse = float(np.float32(1.0) / np.float32(y.scale))
    ops = (
        b.PostOp.binary(b.dnnl_binary_mul, channels),
        *activation,
        b.PostOp.eltwise(b.dnnl_eltwise_linear, inverse, float(y.zero_point)),
    )
    return (*ops, *clip_post_ops(low, high))


def clip_post_ops(low: int | None, high: int | None, offset: int = 0) -> tuple[b.PostOp, ...]:
    """A clip to [low - offset, high - offset] (an unbounded side None), none without
    bounds."""
    if low is None and high is None:
        return ()
    bound = float("inf")
    low_f = -bound if low is None else float(low - offset)
    high_f = bound if high is None else float(high - offset)
    return (b.PostOp.eltwise(b.dnnl_eltwise_clip_v2, low_f, high_f),)


def sum_post_ops(
    dst: tuple[int, ...],
    c: QParams,
    clamp: tuple[int | None, int | None],
    r: QParams,
    y: QParams,
    summand_type: int,
) -> tuple[b.PostOp, ...]:
    """The post-ops of `nn.qconv2d_add` (a `multiplied` convolution, no zero point on y:
    the shift holds it), which compute what onnxruntime's QLinearConv and QLinearAdd
    (mlas's AVX2 kernel) do: c requantized as `multiplier_post_ops` does (c's multipliers),
    clipped to c's range ([low, high] where the clamp gives them) less c's zero point, back
    to c's raw integer (plus c_zp, exact), then fma(c, c_scale / y_scale, shift) with shift =
    y_zp - (c_zp * c_scale / y_scale + r_zp * r_scale / y_scale) in f32, then oneDNN's `sum`
    fma(r, r_scale / y_scale, that) with r read from the destination as `summand_type`;
    oneDNN rounds half to even and saturates. onnxruntime takes its Add's second operand
    first (inner fma), so this is its order where the convolution is the second operand
    (MobileNetV2's x + conv(x)); where it is the first (ResNet's conv(x) + x), the two fmas
    round in the other order: a value within an f32 rounding of a half step may round the
    other way."""
    info = np.iinfo(numpy_dtype(c.element_type))
    low = info.min if clamp[0] is None else clamp[0]
    high = info.max if clamp[1] is None else clamp[1]
    c_zp, r_zp, y_scale = int(c.zero_point), int(r.zero_point), np.float32(y.scale)
    c_ratio, r_ratio = np.float32(c.scale) / y_scale, np.float32(r.scale) / y_scale
    shift = np.float32(y.zero_point) - (c_ratio * np.float32(c_zp) + r_ratio * np.float32(r_zp))
    requantized = multiplier_post_ops(dst, c_zp, low, high)
    return (
        *requantized,
        b.PostOp.eltwise(b.dnnl_eltwise_linear, 1.0, float(c_zp)),
        b.PostOp.eltwise(b.dnnl_eltwise_linear, float(c_ratio), float(shift)),
        b.PostOp.sum(float(r_ratio), 0, summand_type),
    )


def once_sum_post_ops(
    dst: tuple[int, ...],
    clamp: tuple[int | None, int | None],
    r: QParams,
    y: QParams,
    summand_type: int,
) -> tuple[b.PostOp, ...]:
    """The post-ops of an `nn.qconv2d_add` that rounds once (no c; a `multiplied`
    convolution by y's multipliers, no zero point on y): the sum plus bias times the
    channel's multiplier (`multipliers`), plus shift = y_zp - r_zp * r_scale / y_scale, then
    oneDNN's `sum` fma(r, r_scale / y_scale, that) with r read from the destination as
    `summand_type`, clipped to the clamp (an integer bound, which commutes with rounding);
    oneDNN's conversion rounds half to even and saturates: one rounding, where the f32 graph
    (conv + dequantize(r), quantized) has its own f32 roundings before it."""
    channels = (1, dst[1], *(1 for _ in dst[2:]))
    r_ratio = np.float32(r.scale) / np.float32(y.scale)
    shift = np.float32(y.zero_point) - r_ratio * np.float32(r.zero_point)
    ops = (
        b.PostOp.binary(b.dnnl_binary_mul, channels),
        b.PostOp.eltwise(b.dnnl_eltwise_linear, 1.0, float(shift)),
        b.PostOp.sum(float(r_ratio), 0, summand_type),
    )
    return (*ops, *clip_post_ops(*clamp))


# oneDNN's first choices replaced by measured preferences (`preferred_implementation`): its
# first choice (a prefix) -> the replacement, at any size, from VNNI_MIN_PIXELS pixels, or
# where fewer than PARTIAL_TILE_CHANNELS output channels leave an AMX tile partly empty
# (not a multiple of AMX_CHANNELS).
AMX_1X1 = "jit_1x1:avx512_core_amx"
AMX_BRG_1X1 = "brgconv_1x1:avx512_core_amx"
VNNI_1X1 = "jit_int8_1x1:avx512_core_vnni"
BRDGMM_DW = "brdgmm_dw:avx512_core_vnni"
VNNI_DIRECT = "jit_int8:avx512_core_vnni"
VNNI_MIN_PIXELS = 56 * 56
AMX_CHANNELS = 16  # s32 output channels in a row of an AMX tile (64 bytes)
PARTIAL_TILE_CHANNELS = 64  # below: the empty part of the last tile is a large share
PREFERENCES = ((AMX_1X1, VNNI_1X1),)
LARGE_PREFERENCES = ((BRDGMM_DW, VNNI_DIRECT),)
PARTIAL_TILE_PREFERENCES = ((AMX_BRG_1X1, VNNI_DIRECT),)


def preferred_implementation(q: QConvParams, first: str) -> str | None:
    """The implementation taken over oneDNN's first choice `first` for `q` where oneDNN offers
    it on the same source and destination formats (None: `first` stays). oneDNN v3.2 picks
    its AMX `jit_1x1` code for MobileNetV2's 1x1 convolutions on AMX machines: its VNNI
    `jit_int8_1x1` code runs them faster at every size in the network (0.79 -> 0.75 of
    onnxruntime's int8 MobileNetV2, ResNet-50 unchanged: its 1x1 convolutions are AMX
    `brgconv_1x1`, faster than any VNNI code and kept). AMX `brgconv_1x1` gives way to VNNI
    `jit_int8` only where few output channels (under 64) leave an AMX tile partly empty
    (MobileNetV2's 144 -> 24 projection: 0.15 against 0.10 ms alone; 0.75 -> 0.73 of
    onnxruntime's in the network). It picks its `brdgmm_dw` code for depthwise ones, which
    its `jit_int8` code beats from 56x56 output pixels up and ties below. Measured one
    primitive at a time, the implementations in turns, and in the networks:
    docs/benchmarks-int8.md ("AMX or VNNI per primitive", stops 57 and 58)."""
    preferences = PREFERENCES
    if math.prod(q.geometry.dst[2:]) >= VNNI_MIN_PIXELS:
        preferences += LARGE_PREFERENCES
    channels = q.geometry.dst[1]
    if channels % AMX_CHANNELS and channels < PARTIAL_TILE_CHANNELS:
        preferences += PARTIAL_TILE_PREFERENCES
    return next((then for prefix, then in preferences if first.startswith(prefix)), None)


def qconv_pd(q: QConvParams, src: int = ANY, weights: int = ANY, dst: int = ANY) -> b.PrimitiveDesc:
    """The int8 convolution's primitive descriptor with the given format tags (ANY: oneDNN's
    choice, which is nhwc data and a VNNI/AMX weight blocking on avx512_core_vnni): oneDNN's
    first choice, or the implementation `preferred_implementation` names for it where
    oneDNN lists it with the same source and destination descriptors (weights of its
    choice, so the packed bytes follow the implementation)."""
    first = first_qconv_pd(q, src, weights, dst)
    if first.implementation.startswith("ref") and q.multiplied and one_pixel(q.geometry):
        return pixel_matmul_pd(q)
    wanted = preferred_implementation(q, first.implementation)
    if wanted is None:
        return first
    found = qconv_pd_at(q, wanted, (src, weights, dst), first)
    return first if found is None else found


def one_pixel(g: ConvGeometry) -> bool:
    """A 1x1 convolution (stride 1, no padding, one group) of one image of one pixel: a
    vector times a matrix (a squeeze-and-excitation block's, after its global pooling)."""
    return (
        len(g.weights) == 4
        and g.weights[2:] == (1, 1)
        and g.src[0] == 1
        and all(size == 1 for size in (*g.src[2:], *g.dst[2:], *g.strides))
        and not any((*g.padding_l, *g.padding_r))
    )


def pixel_matmul_pd(q: QConvParams) -> b.PrimitiveDesc:
    """A `one_pixel` convolution as oneDNN's int8 matmul [1, Cin] x [Cin, Cout] with the same
    attributes: oneDNN v3.2 has only reference code for such a convolution when a binary
    post-op (the requantizing multipliers, 1 x C x 1 x 1) has the destination's dims, which
    it reads as a full tensor rather than per channel; its matmul takes them (brg code).
    The bytes are the same: the pixel's channels, the weights O x I (as I x O, strided).
    Only `multiplied` (no oneDNN scales: the weights' would be along another axis)."""
    g = q.geometry
    k, n = g.src[1], g.dst[1]
    post_ops = tuple(replace(op, dims=(1, n)) if op.kind == "binary" else op for op in g.post_ops)
    bias = MemoryDesc.with_tag((1, n), NC, b.dnnl_f32) if g.bias else None
    return p.matmul_pd(
        MemoryDesc.with_tag((1, k), NC, q.src_type),
        MemoryDesc.with_tag((k, n), ANY, b.dnnl_s8),
        bias,
        MemoryDesc.with_tag((1, n), NC, q.dst_type),
        post_ops,
        q.quantization,
    )


def is_matmul(pd: b.PrimitiveDesc) -> bool:
    """Whether `qconv_pd` made `pd` by `pixel_matmul_pd` (its source has two dims)."""
    return len(pd.md(b.dnnl_query_src_md).shape) == 2


def qconv_pd_at(
    q: QConvParams,
    wanted: str,
    tags: tuple[int, int, int] = (ANY, ANY, ANY),
    first: b.PrimitiveDesc | None = None,
) -> b.PrimitiveDesc | None:
    """A descriptor of `q` with these format tags at implementation `wanted`, on the source
    and destination descriptors of `first` (default: oneDNN's first choice), or None where
    oneDNN lists none before its reference code. Found by name, not by position: once
    oneDNN's primitive cache holds the convolution, its iterator yields its first choice
    twice."""
    first = first_qconv_pd(q, *tags) if first is None else first
    src, dst = first.md(b.dnnl_query_src_md), first.md(b.dnnl_query_dst_md)
    pd = first_qconv_pd(q, *tags)
    while not pd.implementation.startswith("ref"):
        if (
            pd.implementation == wanted
            and pd.md(b.dnnl_query_src_md) == src
            and pd.md(b.dnnl_query_dst_md) == dst
        ):
            return pd
        if not pd.next_implementation():
            break
    return None


def first_qconv_pd(q: QConvParams, src: int, weights: int, dst: int) -> b.PrimitiveDesc:
    """oneDNN's first choice for `q` with these format tags."""
    g = q.geometry
    bias = MemoryDesc.with_tag((g.dst[1],), X, b.dnnl_f32) if g.bias else None
    return p.convolution_pd(
        MemoryDesc.with_tag(g.src, src, q.src_type),
        MemoryDesc.with_tag(g.weights, weights, b.dnnl_s8),
        bias,
        MemoryDesc.with_tag(g.dst, dst, q.dst_type),
        g.strides,
        g.dilations,
        g.padding_l,
        g.padding_r,
        g.post_ops,
        q.quantization,
    )


def packed_sizes(md: MemoryDesc) -> tuple[int, int]:
    """The bytes of oneDNN's s8 weights descriptor `md` (`dnnl_memory_desc_get_size`,
    compensation included) and those of them past the padded weights: the additional buffers
    its extra flags append (none for a u8 source without zero point), one int32 per padded
    output channel (per group and channel, grouped) for each of s8s8 compensation (128 x the
    sum of the weights; not on AMX) and a source zero point's (the sum of the weights), after
    the weights rounded up to 4 bytes. oneDNN (v3.2 as v3.x, `memory_desc_wrapper::
    additional_buffer_size`) sizes them as three times the first such buffer (it sums the
    size per kind of buffer, each computed from the descriptor's flags, not from the kind),
    so it is 3 x 4 bytes per output channel, of which 4 or 8 hold compensation: measured
    here, ResNet-50's first convolution 768 bytes = 64 channels x 4 x 3."""
    size = md.size
    return size, size - math.prod(md.blocking.padded) if md.is_blocked else 0


def qconv_refusal(
    x_type: np.dtype, w_type: np.dtype, w_zero_point: np.ndarray, x_zp_size: int, y_zp_size: int
) -> str | None:
    """Why oneDNN cannot run a QLinearConv of these types and zero points (None: it can)."""
    if DATA_TYPES.get(np.dtype(x_type)) not in INT8:
        return f"the source is {np.dtype(x_type)}; oneDNN's int8 convolutions take u8 or s8"
    if np.dtype(w_type) != np.int8:
        return f"the weights are {np.dtype(w_type)}; oneDNN's int8 convolutions take s8"
    if np.any(np.asarray(w_zero_point) != 0):
        return "the weights have a zero point != 0; oneDNN's convolutions take none"
    if x_zp_size > 1 or y_zp_size > 1:
        return "a per-channel zero point of x or y; oneDNN's convolutions take one per tensor"
    return None


def implementation_refusal(implementation: str) -> str | None:
    """Why oneDNN's int8 `implementation` does not compute QLinearConv exactly (None: it
    does). Its reference code is slow; its code for CPUs without VNNI (avx2, avx512_core,
    sse41, its gemm) sums pairs of u8 x s8 products in 16 bits (vpmaddubsw), which saturate
    for full-range s8 weights: measured 17 steps off on a grouped convolution capped to avx2
    (oneDNN asks for 7-bit weights there). VNNI (vpdpbusd) and AMX accumulate in 32 bits;
    newer oneDNN (v3.13 here) names its code for AVX-512 with VNNI "avx10_1_512" (AVX10.1
    includes VNNI), e.g. brg_matmul:avx10_1_512 (a user's library, NNLAYOUT_ONEDNN_LIBRARY)."""
    if implementation.startswith("ref"):
        return f"oneDNN offers only {implementation} for it"
    if not any(isa in implementation for isa in ("vnni", "amx", "avx10")):
        return (
            f"oneDNN's {implementation} (no VNNI or AMX here) sums u8 x s8 products in 16 "
            "bits, which saturate"
        )
    return None


def pd_refusal(q: QConvParams) -> str | None:
    """Why oneDNN has no fast and exact int8 convolution for `q` (None: it has)."""
    try:
        pd = qconv_pd(q)
    except b.DnnlError as error:
        return f"oneDNN has no int8 convolution for it: {error}"
    return implementation_refusal(pd.implementation)


@dataclass(frozen=True)
class QuantParams:
    """The scales and zero points of a QLinearConv (per tensor, or per output channel for
    the weights' scales)."""

    x_scale: float
    w_scale: tuple[float, ...]
    y_scale: float
    x_zero_point: int = 0
    y_zero_point: int = 0

    def multipliers(self, channels: int) -> np.ndarray:
        """Per output channel (`channels` of them), float32(float32(x_scale * w_scale[oc]) /
        y_scale), in f32 arithmetic as onnxruntime's QLinearConv computes its output scales."""
        x_scale, y_scale = np.float32(self.x_scale), np.float32(self.y_scale)
        each = (x_scale * np.asarray(self.w_scale, np.float32)) / y_scale
        return np.ascontiguousarray(np.broadcast_to(each, (channels,)))

    def runtime(self, w_zero_point: int) -> tuple[dict[int, list[float]], dict[int, int]]:
        """The scales and zero points by execution argument (source, weights, destination),
        for `quantized_call.runtime_values`."""
        scales = {
            b.DNNL_ARG_SRC: [self.x_scale],
            b.DNNL_ARG_WEIGHTS: list(self.w_scale),
            b.DNNL_ARG_DST: [self.y_scale],
        }
        points = {
            b.DNNL_ARG_SRC: self.x_zero_point,
            b.DNNL_ARG_WEIGHTS: w_zero_point,
            b.DNNL_ARG_DST: self.y_zero_point,
        }
        return scales, points


class QConv(PrimitiveCall):
    """An int8 convolution bound once: weights packed into oneDNN's format (compensation
    included), the bias prescaled to f32, scales and zero points in memories of their own
    (weights given as None: packed by a later `pack`).
    `formats` are the source, weights and destination tags to ask for (ANY: oneDNN's
    choice; `src_md`/`dst_md` say what it chose), the primitive `qconv_pd`'s choice on them;
    or `pd`, a descriptor of `q` made already (e.g. `qconv_pd_at`'s, at another of oneDNN's
    implementations), in their place. `__call__(x, out)`
    runs on arrays of the source's and destination's bytes in those formats; `bind(x, out)`
    on those very arrays."""

    def __init__(
        self,
        q: QConvParams,
        weights: np.ndarray | None,
        bias: np.ndarray | None,
        params: QuantParams,
        formats: tuple[int, int, int] = (ANY, ANY, ANY),
        *,
        pd: b.PrimitiveDesc | None = None,
    ):
        self.q = q
        self.pd = qconv_pd(q, *formats) if pd is None else pd
        values = runtime_values(q.quantization, *params.runtime(0))
        args = (b.DNNL_ARG_SRC, b.DNNL_ARG_WEIGHTS, b.DNNL_ARG_DST)
        if q.geometry.bias:
            args += (b.DNNL_ARG_BIAS,)
        if q.multiplied:  # its bytes, as the scales', in a memory of their own
            values[b.PostOp.binary_arg(0)] = params.multipliers(q.geometry.dst[1])
        super().__init__(Compiled(self.pd, args, runtime=runtime_descriptors(values)), dict(values))
        self.params = params
        self.packed_bytes = self.pd.md(b.dnnl_query_weights_md).size
        if weights is not None:
            self.pack(weights, bias)

    def pack(self, weights: np.ndarray, bias: np.ndarray | None) -> None:
        """Packs s8 `weights` (plain: o, i, h, w or g, o, i, h, w) into the primitive's
        format, compensation included (`packed_bytes`), and copies the `bias` (i32 or f32) to f32:
        prescaled (bias * x_scale * w_scale[oc], as oneDNN adds it after its scales) or,
        `multiplied`, as it is (the multiplier post-op scales sum and bias together)."""
        g = self.q.geometry
        if g.bias != (bias is not None):
            raise ValueError(f"the convolution {'has' if g.bias else 'has no'} bias")
        if is_matmul(self.pd):  # O x I x 1 x 1 read as I x O
            o, i = g.weights[:2]
            given = MemoryDesc.with_strides((i, o), (1, i), b.dnnl_s8)
        else:
            given = MemoryDesc.with_tag(
                g.weights, GOIHW if len(g.weights) == 5 else NCHW, b.dnnl_s8
            )
        packed = reorder_array(weights, given, self.pd.md(b.dnnl_query_weights_md))
        self.packed_bytes = packed.nbytes
        self.arrays[b.DNNL_ARG_WEIGHTS] = packed
        if bias is not None and self.q.multiplied:
            self.arrays[b.DNNL_ARG_BIAS] = bias.astype(np.float32)
        elif bias is not None:
            params = self.params
            scale = np.float32(params.x_scale) * np.asarray(params.w_scale, np.float32)
            self.arrays[b.DNNL_ARG_BIAS] = (bias.astype(np.float32) * scale).astype(np.float32)

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
        """An array of the destination's bytes and data type."""
        dtype = NUMPY_TYPES[self.q.dst_type]
        return np.empty(self.dst_md.size // dtype.itemsize, dtype)

    def __call__(self, x: np.ndarray, out: np.ndarray) -> None:
        self.call_on({b.DNNL_ARG_SRC: x}, out)

    def bind(self, x: np.ndarray, out: np.ndarray) -> BoundCall:
        return self.bind_to({b.DNNL_ARG_SRC: x}, out)

    def run_plain(self, x: np.ndarray) -> np.ndarray:
        """The convolution of plain NCHW `x`, its result plain NCHW: reordered in and out
        of the formats the primitive runs on (for tests and examples)."""
        g, q = self.q.geometry, self.q
        if is_matmul(self.pd):  # one pixel: the bytes of NCHW and of the matmul's rows
            out = self.new_output()
            self(np.ascontiguousarray(x).reshape(-1), out)
            return out.reshape(g.dst)
        src = reorder_array(x, MemoryDesc.with_tag(g.src, NCHW, q.src_type), self.src_md)
        out = self.new_output()
        self(src, out)
        plain = MemoryDesc.with_tag(g.dst, NCHW, q.dst_type)
        return reorder_array(out, self.dst_md, plain).reshape(g.dst)
