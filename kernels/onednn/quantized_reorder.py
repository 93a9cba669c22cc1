"""oneDNN kernels of `nn.quantize` (ONNX QuantizeLinear) as its binary division and
`nn.dequantize` (DequantizeLinear) as its reorder with a scale and a zero point, and of
`nn.qglobal_avg_pool` and `nn.qavg_pool2d` (com.microsoft QLinearGlobalAveragePool and
QLinearAveragePool) as a depthwise convolution of ones.

quantize: y = saturate(round_half_even(x / y_scale) + y_zp), f32 x to u8/s8 y, exactly
as ONNX (and onnxruntime) computes it: oneDNN's binary division by a one-element y_scale
(a correctly rounded f32 division), with its post-ops round (half to even) and linear
(+ y_zp, exact on those integers), converted with saturation, in one pass over x; a rank-4
result is then reordered from NCHW into NHWC, what the int8 kernels read. oneDNN's
quantizing reorder with a destination scale and zero point (v3.2) is not exact: it
multiplies by 1 / y_scale and adds y_zp before it rounds, which rounded 28,400 of 150,528
values lying within 3 f32 steps of a half step the other way (one step), where the division
rounded none; one such ResNet-50 input pixel moved a third of its logits a step from
onnxruntime's. Its one f32 NCHW -> u8 NHWC reorder took 0.22 ms on a 1x3x224x224 input,
the division 0.04 ms and the u8 NCHW -> NHWC copy after it 0.04 ms (busy machine).
oneDNN converts NaN to 0, not to the zero point the reference writes: a call whose
x . x is not finite (a NaN, an infinity, or squares that overflow) runs the reference
kernel instead (BLAS's dot: a pass at a quarter of the cost of numpy's sum). A model's
input is not an arena view, so generated code calls quantize rather than binding it: the
call binds its oneDNN calls to the destination it is given, once per destination, and
points the division's source at x. That state is the kernel's, not the call's: two threads
calling one kernel at once would point each other's source. They do not: each generated
`Program` and each `Interpreter` binds kernels of its own, and its `run` lets one call at
a time in (a lock: calls from several threads take turns, as they must anyway on one arena).

dequantize: y = (x - x_zp) * x_scale in f32, u8/s8 x (NHWC where rank 4) to a plain f32
y: the same products in the same order, exact against the reference.

qglobal_avg_pool: y = saturate(round_half_even(mean(x - x_zp) * x_scale / y_scale) + y_zp).
oneDNN's average pooling takes no scales and has no u8 -> f32 or s32 code (v3.2: only
u8 -> u8, a rounded mean), and its int8 reductions are its reference code; so the op runs
as oneDNN's int8 depthwise convolution (quantized.py) with an H x W kernel of ones whose
weight scale is 1 / (H * W): the sums of x - x_zp exact in s32, times x_scale / (H * W)
and divided by y_scale in f32, then y_zp added, rounded and saturated, all in one call.
Within one step of the reference (which takes the mean in f64) where the value lies at a
half step.

qavg_pool2d: the same convolution with the pooling's window, strides, dilations and pads.
oneDNN's zero-point compensation treats a padded position as holding x_zp (a real 0, as
the reference pads), and with count_include_pad it counts in the divisor, the window's
size. Where the divisor varies (pads that do not count; ceil_mode windows past the padded
end, whose overhang does not count) the kernel refuses, naming why, and the reference
kernel runs.

Each refuses per-axis scales or zero points (`refusal` names it): activations are quantized
per tensor. Only unpadded layouts (NHWC, plain) are read and written, so no padding lane
holds a value that should be a zero point.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial

import numpy as np
from xdsl.dialects import func
from xdsl.ir import BlockArgument, Operation, SSAValue

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import ANY_LAYOUT, PLAIN_LAYOUT, kernel_of
from nnlayout.dialects.layout import LayoutSpec, layout_of
from nnlayout.dialects.nn import ints, shape_of
from nnlayout.dialects.nn.base import numpy_dtype
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.attributes import Quantization
from nnlayout.kernels.onednn.binding import MemoryDesc
from nnlayout.kernels.onednn.common import Layouts, is_fast, row_major_strides
from nnlayout.kernels.onednn.convolution import ConvGeometry
from nnlayout.kernels.onednn.formats import by_layout
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.onednn.quantized import (
    ANY,
    DATA_TYPES,
    INT8,
    QConv,
    QConvParams,
    QuantParams,
    implementation_refusal,
    qconv_pd,
)
from nnlayout.kernels.onednn.quantized_call import (
    BoundCall,
    PrimitiveCall,
    all_finite,
    int8_kernel_fields,
    maps_fill,
    runtime_descriptors,
    runtime_values,
    typed_as,
)
from nnlayout.kernels.reference_quantized import dequantize_array, quantize_array
from nnlayout.kernels.registry import BindingRefused, FixedCall, Kernel, Target

NHWC = LayoutSpec.parse("NHWC")
ReorderOp = nn.QuantizeOp | nn.DequantizeOp
Step = tuple[PrimitiveCall, dict[int, np.ndarray], np.ndarray]  # a call, sources, result
NHWC_TAG = by_layout("data", NHWC.text).value  # type: ignore[union-attr]
POOLS = (nn.QGlobalAvgPoolOp, nn.QAvgPool2dOp)
PoolOp = nn.QGlobalAvgPoolOp | nn.QAvgPool2dOp


def _type(value: object) -> np.dtype:
    return numpy_dtype(value.type.element_type)  # type: ignore[attr-defined]


def _integer(op: Operation) -> object:
    """The op's u8/s8 side: a quantize's result, else its input."""
    return op.results[0] if isinstance(op, nn.QuantizeOp) else op.operands[0]


def refusal(op: Operation) -> str | None:
    """Why the oneDNN kernel cannot compute `op` (None: it can)."""
    integer = _integer(op)
    if DATA_TYPES.get(_type(integer)) not in INT8:
        return f"{_type(integer)} data; the oneDNN kernel takes u8 or s8"
    floats = op.operands[0] if isinstance(op, nn.QuantizeOp) else op.results[0]
    if not isinstance(op, POOLS) and _type(floats) != np.float32:
        return f"{_type(floats)} data; the oneDNN kernel converts from and to f32"
    prefixes = ("x", "y") if isinstance(op, POOLS) else (None,)
    for prefix in prefixes:
        params = op.qparams() if prefix is None else op.qparams(prefix)  # type: ignore[attr-defined]
        if params.per_axis:
            return "per-axis scales; the oneDNN kernel takes one per tensor"
    if isinstance(op, nn.QGlobalAvgPoolOp) and len(shape_of(op.operands[0])) != 4:
        return "not rank 4; the oneDNN kernel pools N, C, H, W"
    if isinstance(op, nn.QAvgPool2dOp) and (varies := nn.varying_divisor(op)) is not None:
        return f"{varies}; the oneDNN kernel divides every window by its size"
    return None


def _layout(op: Operation) -> str:
    """NHWC for a rank-4 integer side (what the int8 convolutions read and write), else
    plain; plain at rank 4 too where the op's input comes plain from kernels chosen before
    it (a transformer's [1, heads, L, d] attention data, or ConvNeXt's channels-last data,
    between products, GELUs and transposes that run plain)."""
    if len(shape_of(op.operands[0])) != 4:
        return PLAIN_LAYOUT
    return PLAIN_LAYOUT if _arrives_plain(op.operands[0]) else NHWC.text


def _arrives_plain(value: SSAValue) -> bool:
    """Whether kernels chosen before write `value` plain: its producer's kernel writes plain,
    or writes the layout of its `"*"` operands (an element-wise op; propagate-layouts gives
    it the layout of any of them that comes reordered) and every one of those with a
    kernel arrives plain (constants, which have none, take any layout). ConvNeXt's
    channels-last MLP is matmul -> add of the bias -> GELU -> quantize -> matmul: a quantize
    in NHWC there transposed [1, 56, 56, 384] twice, a third of its run."""
    seen: set[SSAValue] = set()
    pending, leaves = [value], 0
    while pending:
        current = pending.pop()
        producer = current.owner
        chosen = kernel_of(producer) if isinstance(producer, Operation) else None
        if current in seen or chosen is None:
            continue
        seen.add(current)
        if chosen.results[0] != ANY_LAYOUT:
            if chosen.results[0] != PLAIN_LAYOUT:
                return False
            leaves += 1
            continue
        pending += [
            operand
            for operand, layout in zip(producer.operands, chosen.operands, strict=False)
            if layout == ANY_LAYOUT
        ]
    return leaves > 0


def reorder_layouts(op: Operation, target: Target) -> Layouts:
    """Both sides NHWC where they have rank 4, else plain; the f32 side plain where it is
    the function's argument or result.

    Between ops, an f32 side in NHWC keeps the float ops between a dequantize and a quantize
    (DenseNet's pre-activation batch norms) in NHWC: a plain f32 side made each of those
    transpose twice and run oneDNN's plain batch norm, a third of DenseNet-121 int8's run."""
    integer = _layout(op)
    if isinstance(op, nn.QuantizeOp):
        argument = isinstance(op.operands[0], BlockArgument)
        return (PLAIN_LAYOUT if argument else integer,), (integer,)
    returned = any(isinstance(use.operation, func.ReturnOp) for use in op.results[0].uses)
    return (integer,), (PLAIN_LAYOUT if returned else integer,)


def pool_layouts(op: Operation, target: Target) -> Layouts:
    """Input and result NHWC."""
    return (NHWC.text,), (NHWC.text,)


def data_md(shape: tuple[int, ...], layout: str, data_type: int) -> MemoryDesc:
    """The descriptor of `shape` in `layout` (NHWC, else plain row-major)."""
    if layout == NHWC.text:
        return MemoryDesc.with_tag(shape, NHWC_TAG, data_type)
    return MemoryDesc.with_strides(shape, row_major_strides(shape), data_type)


def _typed_layouts(op: Operation) -> tuple[str, str]:
    """The layouts of input and result as typed (NHWC or plain: others are refused)."""
    found = []
    for value in (op.operands[0], op.results[0]):
        spec = layout_of(value.type)  # type: ignore[arg-type]
        text = PLAIN_LAYOUT if spec is None else spec.text
        if text not in (PLAIN_LAYOUT, NHWC.text):
            raise BindingRefused(f"layout '{text}': the oneDNN kernel reads NHWC or plain data")
        found.append(text)
    return found[0], found[1]


def _quantization(op: nn.DequantizeOp) -> Quantization:
    """dequantize's x scale and zero point, as the reorder's source attributes."""
    return Quantization(((b.DNNL_ARG_SRC, 0),), ((b.DNNL_ARG_SRC, 0),))


def reorder_pd(op: nn.DequantizeOp, layouts: tuple[str, str]) -> b.PrimitiveDesc:
    """oneDNN's reorder computing dequantize from layouts[0] to layouts[1]."""
    shape = shape_of(op.operands[0])
    types = [DATA_TYPES[_type(v)] for v in (op.operands[0], op.results[0])]
    return p.reorder_pd(
        data_md(shape, layouts[0], types[0]),
        data_md(shape, layouts[1], types[1]),
        _quantization(op),
    )


def quantize_pd(op: nn.QuantizeOp) -> b.PrimitiveDesc:
    """oneDNN's binary division of x by a one-element y_scale, rounded half to even and
    y_zp added (post-ops round and linear), converted with saturation into u8/s8:
    elementwise, so the result keeps x's order whatever its layout (both described as
    plain row-major)."""
    shape = shape_of(op.input)
    one = (1,) * len(shape)
    params = op.qparams()
    return p.binary_pd(
        b.dnnl_binary_div,
        data_md(shape, PLAIN_LAYOUT, b.dnnl_f32),
        MemoryDesc.with_strides(one, one, b.dnnl_f32),
        data_md(shape, PLAIN_LAYOUT, DATA_TYPES[_type(op.output)]),
        (
            b.PostOp.eltwise(b.dnnl_eltwise_round),
            b.PostOp.eltwise(b.dnnl_eltwise_linear, 1.0, float(params.zero_point)),
        ),
    )


def _move_pd(op: nn.QuantizeOp, layouts: tuple[str, str]) -> b.PrimitiveDesc:
    """The reorder copying quantize's u8/s8 result from layouts[0] into layouts[1]."""
    shape, data = shape_of(op.output), DATA_TYPES[_type(op.output)]
    return p.reorder_pd(data_md(shape, layouts[0], data), data_md(shape, layouts[1], data))


def pool_spec(op: PoolOp) -> tuple[QConvParams, QuantParams]:
    """`op` as oneDNN's depthwise int8 convolution with a window of ones (the whole image
    for qglobal_avg_pool), weight scale 1 / (the window's size)."""
    n, c, h, w = shape_of(op.input)
    if isinstance(op, nn.QGlobalAvgPoolOp):
        window, strides, pads, dilations = (h, w), (1, 1), (0, 0, 0, 0), (1, 1)
    else:
        window, strides = ints(op.kernel), ints(op.strides)
        pads, dilations = ints(op.pads), ints(op.dilations)
    g = ConvGeometry(
        (n, c, h, w),
        (c, 1, 1, *window),
        False,
        shape_of(op.output),
        strides,
        dilations,
        pads[:2],
        pads[2:],
        "depthwise",
    )
    x, y = op.qparams("x"), op.qparams("y")
    params = QuantParams(
        float(x.scale),
        (1.0 / math.prod(window),),
        float(y.scale),
        int(x.zero_point),
        int(y.zero_point),
    )
    data = DATA_TYPES[_type(op.input)]
    q = QConvParams(g, data, data, False, params.x_zero_point != 0, params.y_zero_point != 0)
    return q, params


def pool_conv(op: PoolOp) -> QConv:
    """`pool_spec`'s convolution on NHWC data, its weights packed."""
    q, params = pool_spec(op)
    weights = np.ones(q.geometry.weights, np.int8)
    return QConv(q, weights, None, params, (NHWC_TAG, ANY, NHWC_TAG))


def _pd(op: Operation, layouts: tuple[str, str]) -> b.PrimitiveDesc:
    if isinstance(op, POOLS):
        return qconv_pd(pool_spec(op)[0], NHWC_TAG, ANY, NHWC_TAG)
    if isinstance(op, nn.QuantizeOp):
        return quantize_pd(op)
    return reorder_pd(op, layouts)  # type: ignore[arg-type]


def _implementations(op: Operation, layouts: tuple[str, str]) -> str:
    """The oneDNN implementations computing `op` from layouts[0] to layouts[1] (quantize
    into NHWC: the division's, then the copy's)."""
    found = _pd(op, layouts).implementation
    if isinstance(op, nn.QuantizeOp) and layouts[0] != layouts[1]:
        found += "+" + _move_pd(op, layouts).implementation  # type: ignore[arg-type]
    return found


def _layouts_of(op: Operation) -> tuple[str, str]:
    if isinstance(op, POOLS):
        return NHWC.text, NHWC.text
    (given,), (made,) = reorder_layouts(op, None)  # type: ignore[arg-type]
    return given, made


def accepts(op: Operation, target: Target, padding: bool) -> str | None:
    reason = refusal(op)
    if reason is not None:
        return reason
    try:
        implementation = _implementations(op, _layouts_of(op))
    except b.DnnlError as error:
        return f"oneDNN has no primitive for it: {error}"
    if isinstance(op, POOLS):
        return implementation_refusal(implementation)
    return None if is_fast(implementation) else f"oneDNN offers only {implementation} for it"


def workspace(op: Operation, target: Target) -> int:
    return _pd(op, _layouts_of(op)).scratchpad_bytes


class _Bound:
    """The op's primitive bound once for the layouts its types carry (`on`: pointed once
    at the arrays generated code passes, quantized_call.py); quantize checks on each call
    that its input is finite (else the reference kernel runs)."""

    def __init__(self, op: Operation):
        reason = refusal(op)
        if reason is not None:
            raise BindingRefused(reason)
        self.op, self.layouts = op, _typed_layouts(op)
        quantize = isinstance(op, nn.QuantizeOp)
        # quantize into NHWC: the division (elementwise: x's order), then a copy into NHWC
        # (oneDNN's binary primitive has only its reference code between two formats).
        moves = quantize and self.layouts[1] != self.layouts[0]
        try:
            self.call = _primitive_call(op, self.layouts)
            self.move = _move(op, self.layouts) if moves else None
        except b.DnnlError as error:
            raise BindingRefused(f"oneDNN has no primitive for it as typed: {error}") from None
        self.types = tuple(
            p.NUMPY_TYPES[self.call.compiled.pd.md(b.dnnl_query_exec_arg_md, arg).data_type]
            for arg in (b.DNNL_ARG_SRC, b.DNNL_ARG_DST)
        )
        size = math.prod(shape_of(op.operands[0]))
        self.between = np.empty(size, self.types[1]) if moves else None
        self.bound_out: np.ndarray | None = None
        self.bound_calls: list[BoundCall] = []
        self.spare: np.ndarray | None = None  # the result when `out` is not oneDNN's
        # Where oneDNN's primitive drops the zero point on this shape, the reference kernel.
        self.reference = not isinstance(op, POOLS) and not _keeps_zero_point(
            op,  # type: ignore[arg-type]
            self.call,
        )

    def _direct(self, out: np.ndarray) -> bool:
        last = self.call if self.move is None else self.move
        return out.flags.c_contiguous and out.nbytes == last.compiled.nbytes(b.DNNL_ARG_DST)

    def _takes(self, x: np.ndarray) -> bool:
        """Whether the primitive's source can be x's bytes: elements of its source type's
        size, as many bytes as it reads."""
        source_bytes = self.call.compiled.nbytes(b.DNNL_ARG_SRC)
        return x.dtype.itemsize == self.types[0].itemsize and x.nbytes == source_bytes

    def _source(self, x: np.ndarray) -> np.ndarray | None:
        """x's bytes as oneDNN reads them (None: not what the primitive takes)."""
        return x.reshape(-1).view(self.types[0]) if self._takes(x) else None

    def _steps(self, source: np.ndarray, out: np.ndarray) -> list[Step]:
        """The oneDNN calls, each with its sources and destination."""
        result = out.reshape(-1).view(self.types[1])
        if self.move is None:
            return [(self.call, {b.DNNL_ARG_SRC: source}, result)]
        return [
            (self.call, {b.DNNL_ARG_SRC: source}, self.between),
            (self.move, {b.DNNL_ARG_SRC: self.between}, result),
        ]

    def __call__(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        x = inputs[0]
        if out is self.bound_out and self._same_kind(x):  # a model input, each run
            self.bound_calls[0].compiled.memories[b.DNNL_ARG_SRC].point_to(x.ctypes.data)
            self._quantize(self.bound_calls, x, out)
            return
        x = np.ascontiguousarray(x)
        source = self._source(x)
        if self.reference or source is None:
            self._reference(x, out)
            return
        if not self._direct(out):
            if self.spare is None or self.spare.shape != out.shape:
                self.spare = np.empty(out.shape, out.dtype)  # kept: quantize binds to it
            self(inputs, self.spare)
            out[...] = self.spare
            return
        if isinstance(self.op, nn.QuantizeOp):
            self._quantize(self._bound_for(source, out), x, out)
            return
        for call, sources, destination in self._steps(source, out):
            call.call_on(sources, destination)

    def _same_kind(self, x: np.ndarray) -> bool:
        """Whether `x` is what `_source` takes as it is: C-contiguous, of the primitive's
        source type and size (the quantize's calls then need only its address: the
        generated module's path for a model input, each run, with less Python per call)."""
        return x.flags.c_contiguous and x.dtype == self.types[0] and self._takes(x)

    def _bound_for(self, source: np.ndarray, out: np.ndarray) -> list[BoundCall]:
        """quantize's oneDNN calls bound to `out`, bound again only when another `out`
        comes, the division's source pointed at `source` (x's bytes) on every call. A
        model's input is not an arena view, so generated code calls the kernel rather than
        binding it: pointing every memory object on every call cost more than the calls.
        Not for two threads at once (the calls and their source are this kernel's): the
        `run` of the program that bound it takes a lock, so its calls take turns."""
        if self.bound_out is not out:
            self.bound_calls = [call.bind_to(*step) for call, *step in self._steps(source, out)]
            self.bound_out = out  # held: its buffer stays where the calls point
        else:
            self.bound_calls[0].compiled.memories[b.DNNL_ARG_SRC].point_to(source.ctypes.data)
        return self.bound_calls

    def _guard(self, x: np.ndarray, out: np.ndarray) -> None:
        """quantize's input with a NaN or an infinity (`all_finite`): the reference
        kernel's result."""
        if not all_finite(x.reshape(-1).view(self.types[0])):
            self._reference(x, out)

    def _reference(self, x: np.ndarray, out: np.ndarray) -> None:
        """The reference kernel's result, in the layouts the types carry."""
        op = self.op
        kernel = quantize_array if isinstance(op, nn.QuantizeOp) else dequantize_array
        plain = kernel(unpack_input(np.asarray(x), self.layouts[0], op), op.qparams())  # type: ignore[attr-defined]
        out[...] = pack_result(plain, self.layouts[1]).reshape(out.shape).view(out.dtype)

    def on(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> FixedCall:
        x = inputs[0]
        source = self._source(x) if x.flags.c_contiguous else None
        if self.reference or source is None or not self._direct(out):
            return partial(self, inputs, out)
        calls = [call.bind_to(*step) for call, *step in self._steps(source, out)]
        if not isinstance(self.op, nn.QuantizeOp):
            return calls[0]
        return partial(self._quantize, calls, x, out)

    def _quantize(self, calls: Sequence[FixedCall], x: np.ndarray, out: np.ndarray) -> None:
        for call in calls:
            call()
        self._guard(x, out)


def _keeps_zero_point(op: ReorderOp, call: PrimitiveCall) -> bool:
    """Whether the primitive computing `op` keeps its zero point on this shape
    (`maps_fill`; oneDNN v3.2's reorder drops it on some): dequantize maps zp + 1 to
    x_scale, quantize's division y_scale to zp + 1 (-1 and zp - 1 at the type's maximum)."""
    params = op.qparams()
    zero = int(params.zero_point)
    step = 1 if zero < np.iinfo(_type(_integer(op))).max else -1
    scaled = float(np.float32(step) * np.float32(params.scale))
    if isinstance(op, nn.QuantizeOp):
        return maps_fill(call, scaled, zero + step)
    return maps_fill(call, zero + step, scaled)


def _move(op: nn.QuantizeOp, layouts: tuple[str, str]) -> PrimitiveCall:
    """A copy of quantize's u8/s8 result from layouts[0] (the division, elementwise, keeps
    x's order) into layouts[1]."""
    pd = _move_pd(op, layouts)
    return PrimitiveCall(Compiled(pd, (b.DNNL_ARG_SRC, b.DNNL_ARG_DST)), {})


def _primitive_call(op: Operation, layouts: tuple[str, str]) -> PrimitiveCall:
    """The oneDNN call computing `op` from layouts[0] to layouts[1] (quantize: into
    layouts[0], elementwise)."""
    if isinstance(op, POOLS):
        return pool_conv(op)
    if isinstance(op, nn.QuantizeOp):
        scale = np.asarray([op.qparams().scale], np.float32)
        args = (b.DNNL_ARG_SRC, b.DNNL_ARG_SRC_1, b.DNNL_ARG_DST)
        return PrimitiveCall(Compiled(quantize_pd(op), args), {b.DNNL_ARG_SRC_1: scale})
    params = op.qparams()  # type: ignore[attr-defined]
    values = runtime_values(
        _quantization(op),  # type: ignore[arg-type]
        {b.DNNL_ARG_SRC: [float(params.scale)]},
        {b.DNNL_ARG_SRC: int(params.zero_point)},
    )
    pd = reorder_pd(op, layouts)  # type: ignore[arg-type]
    compiled = Compiled(pd, (b.DNNL_ARG_SRC, b.DNNL_ARG_DST), runtime=runtime_descriptors(values))
    return PrimitiveCall(compiled, values)


def unpack_input(x: np.ndarray, layout: str, op: Operation) -> np.ndarray:
    """`op`'s operand 0 (u8/s8 or f32 data) as a plain array of its shape, from `layout`
    (NHWC, else plain)."""
    shape = shape_of(op.operands[0])
    return NHWC.unpack(x, shape) if layout == NHWC.text else x.reshape(shape)


def pack_result(x: np.ndarray, layout: str) -> np.ndarray:
    """A plain result in `layout` (NHWC, else plain)."""
    return NHWC.pack(x) if layout == NHWC.text else x


def _implementation(op: Operation) -> str:
    return _implementations(op, _typed_layouts(op))


def quantized_reorder_kernels(family: str) -> list[Kernel]:
    """quantize_onednn, dequantize_onednn, qglobal_avg_pool_onednn and qavg_pool2d_onednn."""
    common = int8_kernel_fields(
        _Bound, accepts=accepts, workspace=workspace, implementation_of=_implementation
    )
    return [
        Kernel("quantize_onednn", nn.QuantizeOp, family, layouts=reorder_layouts, **common),  # type: ignore[arg-type]
        Kernel("dequantize_onednn", nn.DequantizeOp, family, layouts=reorder_layouts, **common),  # type: ignore[arg-type]
        Kernel(
            "qglobal_avg_pool_onednn",
            nn.QGlobalAvgPoolOp,
            family,
            layouts=pool_layouts,
            accepts_types=typed_as(NHWC.text),
            **common,
        ),  # type: ignore[arg-type]
        Kernel(
            "qavg_pool2d_onednn",
            nn.QAvgPool2dOp,
            family,
            layouts=pool_layouts,
            accepts_types=typed_as(NHWC.text),
            **common,
        ),  # type: ignore[arg-type]
    ]
