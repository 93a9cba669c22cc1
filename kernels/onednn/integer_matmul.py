"""`nn.matmul_integer` (ONNX MatMulInteger, what onnxruntime's `quantize_dynamic` makes of a
MatMul or Gemm) as oneDNN's int8 matmul primitive:

    y_s32 = sum_k (a - a_zp) * (b - b_zp)

a is u8 or s8 of rank 2 or more, b an s8 constant (K, N) packed once into the format oneDNN
chose (`format_tag::any`), y s32, plain. a's leading axes are one axis of rows for oneDNN
(the same bytes): torch's attention projects [L, 1, E] activations, which oneDNN would
otherwise run as L products of one row each, several times slower. No scales and no
post-ops: oneDNN then writes its s32 accumulator as it is (exact; a scale, even 1, would
round it through f32). `nn.matmul_integer_to_float` (MatMulInteger -> Cast -> Mul [-> Add],
`fuse-integer-scale`) is the same primitive writing f32: oneDNN converts the s32 sum to f32
and multiplies it by the run-time scale, given as its weight scale (mask 0, or per column):
one f32 product, as Cast and Mul round; then adds the bias, where the op has one, as
oneDNN's f32 bias (one f32 addition after the scale, as Add rounds: bit for bit the
unfused ops', tests/kernels/test_onednn_integer_matmul.py).

a's zero point is known only at run time (DynamicQuantizeLinear's): it is the rank-0 operand,
passed on every call as oneDNN's run-time zero point (`DNNL_ARG_ATTR_ZERO_POINTS |
DNNL_ARG_SRC`, an s32 memory, mask 0); b's is the op's constant `b_zero_point` (mask 0, one
per tensor).

Refused, with the reason (`integer_matmul_refusal`; the op then takes its reference kernel):
u8 weights (oneDNN's int8 matmul takes s8 weights; onnxruntime's QUInt8 weight type makes
them), a zero point per column of b (oneDNN v3.2's matmul takes one per tensor), a of rank
1 or b not 2-D, and oneDNN code without VNNI or AMX (`implementation_refusal`: 16-bit pair
sums saturate); binding refuses values typed in a layout (hand-written IR).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, partial

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.compute import constant_operands
from nnlayout.dialects.kernel_attr import PLAIN_LAYOUT
from nnlayout.dialects.nn import shape_of, tensor_type
from nnlayout.dialects.nn.integer import zero_point_values
from nnlayout.dialects.nn.quantized import numpy_dtype
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn.attributes import Quantization, runtime_md
from nnlayout.kernels.onednn.binding import MemoryDesc
from nnlayout.kernels.onednn.common import reorder_array, row_major_strides
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.onednn.quantized import ANY, DATA_TYPES, INT8, implementation_refusal
from nnlayout.kernels.onednn.quantized_call import PackedFrom, typed_as
from nnlayout.kernels.onednn.quantized_matmul import as_rows, int8_matmul_pd
from nnlayout.kernels.registry import BindingRefused, BindingSession, FixedCall, Kernel, Target

_ZERO_POINT = b.DNNL_ARG_ATTR_ZERO_POINTS | b.DNNL_ARG_SRC
_WEIGHTS_ZERO_POINT = b.DNNL_ARG_ATTR_ZERO_POINTS | b.DNNL_ARG_WEIGHTS
_SCALE = b.DNNL_ARG_ATTR_SCALES | b.DNNL_ARG_WEIGHTS
IntegerProduct = nn.MatmulIntegerOp | nn.MatmulIntegerToFloatOp


@dataclass(frozen=True)
class IntegerMatmulParams:
    """An integer product: shapes of a (rows, K) and b (K, N), a's data type, and which zero
    points it has. Hashable: it keys the choice cache."""

    a: tuple[int, ...]
    b: tuple[int, int]
    src_type: int = b.dnnl_u8
    src_zero_point: bool = True
    weights_zero_point: bool = False
    scales: int = 0  # matmul_integer_to_float's: 1 (per tensor) or N (per column); else 0
    bias: bool = False  # matmul_integer_to_float's f32 bias, added after the scale

    @property
    def dst(self) -> tuple[int, ...]:
        return (self.a[0], self.b[1])

    @property
    def dst_type(self) -> int:
        """s32 (the exact sums), or f32 scaled (matmul_integer_to_float)."""
        return b.dnnl_f32 if self.scales else b.dnnl_s32

    @property
    def weights(self) -> tuple[int, ...]:
        return self.b

    @property
    def quantization(self) -> Quantization:
        wanted = (
            (b.DNNL_ARG_SRC, self.src_zero_point),
            (b.DNNL_ARG_WEIGHTS, self.weights_zero_point),
        )
        scales = ((b.DNNL_ARG_WEIGHTS, 0 if self.scales == 1 else 0b10),) if self.scales else ()
        return Quantization(scales, tuple((arg, 0) for arg, on in wanted if on))


def integer_matmul_pd(q: IntegerMatmulParams, weights: int = ANY) -> b.PrimitiveDesc:
    """The product's primitive descriptor: plain a and y (s32, or f32 scaled), b in
    `weights` (ANY: oneDNN's choice)."""
    bias = MemoryDesc.with_strides((1, q.b[1]), (q.b[1], 1), b.dnnl_f32) if q.bias else None
    return int8_matmul_pd(
        q.a, q.src_type, (q.weights, weights), bias, q.dst, q.dst_type, q.quantization
    )


def integer_matmul_spec(op: IntegerProduct) -> tuple[IntegerMatmulParams, int]:
    """`op` in oneDNN's terms (a's leading axes as one), and b's zero point (one per
    tensor)."""
    b_zero_point = int(zero_point_values(op, "b_zero_point").reshape(-1)[0])
    q = IntegerMatmulParams(
        as_rows(shape_of(op.a)),
        shape_of(op.b),  # type: ignore[arg-type]
        DATA_TYPES[numpy_dtype(tensor_type(op.a).element_type)],
        op.a_zero_point is not None,
        b_zero_point != 0,
        math.prod(shape_of(op.scale)) if isinstance(op, nn.MatmulIntegerToFloatOp) else 0,
        isinstance(op, nn.MatmulIntegerToFloatOp) and op.bias is not None,
    )
    return q, b_zero_point


def integer_matmul_refusal(op: IntegerProduct) -> str | None:
    """Why oneDNN cannot run `op` exactly (None: it can)."""
    a_type = numpy_dtype(tensor_type(op.a).element_type)
    b_type = numpy_dtype(tensor_type(op.b).element_type)
    if DATA_TYPES.get(a_type) not in INT8:
        return f"a is {a_type}; oneDNN's int8 matmul takes u8 or s8"
    if b_type != np.int8:
        return f"b is {b_type}; oneDNN's int8 matmul takes s8 weights"
    zero_points = zero_point_values(op, "b_zero_point").reshape(-1)
    if np.any(zero_points != zero_points[0]):
        return "b has a zero point per column; oneDNN's matmul takes one per tensor"
    if len(shape_of(op.a)) < 2 or len(shape_of(op.b)) != 2:
        return (
            f"a of rank {len(shape_of(op.a))} and b of rank {len(shape_of(op.b))}; the kernel "
            "takes a of rank >= 2, b 2-D"
        )
    return integer_matmul_choice(integer_matmul_spec(op)[0])


@cache
def integer_matmul_choice(q: IntegerMatmulParams) -> str | None:
    """Why oneDNN has no fast and exact integer matmul for `q` (None: it has)."""
    try:
        return implementation_refusal(integer_matmul_pd(q).implementation)
    except b.DnnlError as error:
        return f"oneDNN has no int8 matmul for it: {error}"


class IntegerMatmul:
    """An integer product bound once: b packed at the first call where it is a load-time
    constant, else on every call (`PackedFrom`), b's zero point in a memory of its own, a's
    (and matmul_integer_to_float's scale, as oneDNN's weight scale) set from its operand on
    every call."""

    def __init__(self, q: IntegerMatmulParams, b_zero_point: int, constant: bool = False):
        self.q = q
        self.pd = integer_matmul_pd(q)
        self.arrays: dict[int, np.ndarray] = {}
        if q.src_zero_point:
            self.arrays[_ZERO_POINT] = np.zeros(1, np.int32)
        if q.weights_zero_point:
            self.arrays[_WEIGHTS_ZERO_POINT] = np.array([b_zero_point], np.int32)
        runtime = {arg: runtime_md(array, b.dnnl_s32) for arg, array in self.arrays.items()}
        if q.scales:
            self.arrays[_SCALE] = np.ones(q.scales, np.float32)
            runtime[_SCALE] = runtime_md(self.arrays[_SCALE], b.dnnl_f32)
        self.dst_dtype = np.dtype(np.float32 if q.scales else np.int32)
        args = (b.DNNL_ARG_SRC, b.DNNL_ARG_WEIGHTS, *([b.DNNL_ARG_BIAS] if q.bias else []))
        args += (b.DNNL_ARG_DST,)
        self.compiled = Compiled(self.pd, args, runtime=runtime)
        self.scratchpad = np.empty(self.compiled.scratchpad_bytes, np.uint8)
        self.packed_from = PackedFrom(constant)  # b a load-time constant: packed once
        self.src_dtype = np.dtype(np.uint8 if q.src_type == b.dnnl_u8 else np.int8)

    def pack(self, weights: np.ndarray) -> None:
        given = MemoryDesc.with_strides(
            self.q.weights, row_major_strides(self.q.weights), b.dnnl_s8
        )
        wanted = self.pd.md(b.dnnl_query_weights_md)
        plain = np.ascontiguousarray(weights).view(np.int8)
        self.arrays[b.DNNL_ARG_WEIGHTS] = reorder_array(plain, given, wanted)
        self.packed_from.packed(weights)

    def __call__(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        a, weights, *rest = inputs
        if self.q.scales:
            scale, *rest = rest
            self.arrays[_SCALE][...] = scale
        if self.packed_from.stale(weights):
            self.pack(weights)
        if self.q.src_zero_point:
            zero_point, *rest = rest
            self.arrays[_ZERO_POINT][0] = int(np.asarray(zero_point).reshape(()))
        source = np.ascontiguousarray(a).reshape(-1).view(self.src_dtype)
        direct = out.flags.c_contiguous and out.nbytes == self.compiled.nbytes(b.DNNL_ARG_DST)
        result = out if direct else np.empty(out.shape, self.dst_dtype)
        destination = result.reshape(-1).view(self.dst_dtype)
        arrays = {b.DNNL_ARG_SRC: source, b.DNNL_ARG_DST: destination}
        if self.q.bias:  # read on every call: a bias given as an argument may change
            arrays[b.DNNL_ARG_BIAS] = np.ascontiguousarray(rest[0], np.float32).reshape(-1)
        self.compiled({**self.arrays, **arrays}, self.scratchpad)
        if not direct:
            out[...] = result.view(out.dtype)

    def on(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> FixedCall:
        return partial(self, inputs, out)


def prepare_integer_matmul(op: Operation, session: BindingSession | None = None) -> IntegerMatmul:
    assert isinstance(op, IntegerProduct)
    reason = integer_matmul_refusal(op)
    if reason is not None:
        raise BindingRefused(reason)
    return IntegerMatmul(*integer_matmul_spec(op), 1 in constant_operands(op))


def _accepts(op: Operation, target: Target, padding: bool) -> str | None:
    assert isinstance(op, IntegerProduct)
    return integer_matmul_refusal(op)


def _run(op: Operation, inputs: Sequence[np.ndarray]) -> np.ndarray:
    kernel = prepare_integer_matmul(op)
    out = np.empty(shape_of(op.results[0]), kernel.dst_dtype)
    kernel(inputs, out)
    return out


def _implementation(op: Operation) -> str:
    assert isinstance(op, IntegerProduct)
    return integer_matmul_pd(integer_matmul_spec(op)[0]).implementation


def integer_kernels(family: str) -> list[Kernel]:
    """The descriptors of the dynamic quantization ops' oneDNN kernels: matmul_integer_onednn
    and matmul_integer_to_float_onednn."""
    return [
        Kernel(
            name,
            op_class,
            family,
            _run,
            accepts=_accepts,
            layouts=lambda op, target: ((PLAIN_LAYOUT,) * len(op.operands), (PLAIN_LAYOUT,)),
            reads_halo=False,
            writes_strided=False,
            workspace=lambda op, target: prepare_integer_matmul(op).compiled.scratchpad_bytes,
            prepare=prepare_integer_matmul,
            accepts_types=typed_as(PLAIN_LAYOUT),
            integer_data=True,
            implementation_of=_implementation,
        )
        for name, op_class in (
            ("matmul_integer_onednn", nn.MatmulIntegerOp),
            ("matmul_integer_to_float_onednn", nn.MatmulIntegerToFloatOp),
        )
    ]
