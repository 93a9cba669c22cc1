"""The oneDNN kernels of the quantized ops: `nn.qconv2d` (ONNX QLinearConv) as oneDNN's int8
convolution (quantized.py) and `nn.qmatmul` (QLinearMatMul) as its int8 matmul
(quantized_matmul.py), registered with the f32 kernels (kernels.py) on every target that
lists the `onednn` family (`onednn`, `onednn-*`, `host` where oneDNN loads).

Dispatch asks `accepts`: the refusals are oneDNN's (a weights zero point != 0 or u8 weights
for a convolution, per-channel zero points, only its reference code for the shape), each
naming what is missing, and the op then takes the reference kernel. A convolution's source
and result are in the format oneDNN chose with `format_tag::any` (nhwc for u8/s8 on
avx512_core_vnni and AMX: no channel padding, so no padding lane to hold a zero point), its
weights plain: they are packed once, when the kernel is bound (`_Bound`), into oneDNN's
format with the compensation after them; the kernel keeps them, as the f32 convolutions
keep weights repacked at load. `packed_constants` tells `fold-constants` how many bytes
that takes (the constant records it, the plan counts it; `copied_constants` the bias's f32
copy, made at packing), and binding refuses any operand
whose record is not the size of an operand it packs (`check_packed_claims`). A matmul's
operands are plain. The workspace is the primitive's scratchpad.

The requantization is onnxruntime's (`quantized.multiplier_post_ops`); clamp_min/clamp_max
(a fused Relu or Clip) a relu or clip post-op after it, exact. A qconv2d's activation is
oneDNN's eltwise on the real result, then quantized (`quantized.activation_post_ops`).
`nn.qconv2d_add` (`qconv2d_add_onednn`, made by fuse-post-ops) is the same convolution with
the qconv2d's requantization and the add as post-ops (`quantized.sum_post_ops`); its addend,
in the result's format, is the destination's starting contents: the kernel may write over
it (in place), else copies it there first.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, partial

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.compute import constant_operands
from nnlayout.dialects.constant_expressions import is_constant_operand
from nnlayout.dialects.kernel_attr import PLAIN_LAYOUT, kernel_of
from nnlayout.dialects.layout import buffer_bytes, layout_of
from nnlayout.dialects.nn import shape_of
from nnlayout.dialects.nn.quantized import numpy_dtype
from nnlayout.dialects.packing import defining_op, packed_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn.common import Layouts, format_of
from nnlayout.kernels.onednn.convolution import addend_types_reason, window_geometry
from nnlayout.kernels.onednn.eltwise import activation_eltwise
from nnlayout.kernels.onednn.formats import Format, by_layout, identify
from nnlayout.kernels.onednn.primitives import NUMPY_TYPES
from nnlayout.kernels.onednn.quantized import (
    ANY,
    DATA_TYPES,
    INT8,
    QConv,
    QConvParams,
    QuantParams,
    activation_post_ops,
    implementation_refusal,
    is_matmul,
    multiplier_post_ops,
    once_sum_post_ops,
    packed_sizes,
    qconv_pd,
    qconv_refusal,
    sum_post_ops,
)
from nnlayout.kernels.onednn.quantized_call import PackedFrom, typed_as
from nnlayout.kernels.onednn.quantized_matmul import (
    QMatmul,
    QMatmulParams,
    as_rows,
    qmatmul_pd,
    qmatmul_refusal,
)
from nnlayout.kernels.registry import BindingRefused, BindingSession, FixedCall, Kernel, Target

Spec = tuple[QConvParams, QuantParams]
QConvOp = nn.QConv2dOp | nn.QConv2dAddOp | nn.QConv2dToFloatOp


def _value_type(value: object) -> np.dtype:
    return numpy_dtype(value.type.element_type)  # type: ignore[attr-defined]


def _params(op: Operation, prefixes: tuple[str, ...], outputs: int) -> QuantParams:
    """The parameters `prefixes` names (x, w and y; without y, a real result: scale 1)."""
    x, w, *y = (op.qparams(p) for p in prefixes)  # type: ignore[attr-defined]
    scales = np.broadcast_to(w.scale, (outputs,) if w.per_axis else ()).reshape(-1)
    return QuantParams(
        float(x.scale),
        tuple(float(s) for s in scales),
        float(y[0].scale) if y else 1.0,
        int(x.zero_point),
        int(y[0].zero_point) if y else 0,
    )


def qconv_refusal_of(op: QConvOp) -> str | None:
    """What of `op` oneDNN's int8 convolution cannot take (None: nothing)."""
    w = op.qparams("w")
    reason = qconv_refusal(
        _value_type(op.x), _value_type(op.w), w.zero_point, op.qparams("x").zero_point.size, 1
    )
    if isinstance(op, nn.QConv2dToFloatOp):
        return reason
    if reason is None and DATA_TYPES.get(_value_type(op.output)) not in INT8:
        reason = f"the result is {_value_type(op.output)}; the kernel writes u8 or s8"
    return reason


def qconv_spec(op: QConvOp) -> Spec:
    """`op` in oneDNN's terms: the convolution (requantized by its multipliers, then its
    clamp, or its residual add, as post-ops) and its parameters (y's; c's where the
    convolution's result is rounded before the add)."""
    o = shape_of(op.w)[0]
    if isinstance(op, nn.QConv2dToFloatOp):
        return _to_float_spec(op, o)
    adds = isinstance(op, nn.QConv2dAddOp)
    params = _params(op, ("x", "w", "c" if adds and not op.rounds_once else "y"), o)
    dst_type = DATA_TYPES[_value_type(op.output)]
    dst = tuple(shape_of(op.output))
    low, high = op.clamp
    if isinstance(op, nn.QConv2dAddOp):
        r, y = op.qparams("r"), op.qparams("y")
        summand = DATA_TYPES[numpy_dtype(r.element_type)]
        if op.rounds_once:
            post_ops = once_sum_post_ops(dst, (low, high), r, y, summand)
        else:
            post_ops = sum_post_ops(dst, op.qparams("c"), (low, high), r, y, summand)
    elif op.activation is not None:
        post_ops = activation_post_ops(dst, activation_eltwise(op), op.qparams("y"), low, high)
        params = _params(op, ("x", "w"), o)  # multipliers: the real scale
    else:
        post_ops = multiplier_post_ops(dst, params.y_zero_point, low, high)
    g = window_geometry(op, op.x, op.w, op.bias is not None, post_ops)
    q = QConvParams(
        g,
        DATA_TYPES[_value_type(op.x)],
        dst_type,
        op.qparams("w").per_axis,
        params.x_zero_point != 0,
        params.y_zero_point != 0 and not adds,
        multiplied=True,
    )
    return q, params


def _to_float_spec(op: nn.QConv2dToFloatOp, outputs: int) -> Spec:
    """oneDNN's int8 convolution writing f32: its source and weight scales (oneDNN
    multiplies the sum by them and adds the bias, prescaled by `QConv.pack`), the
    activation an eltwise post-op after them, no result scale or zero point."""
    params = _params(op, ("x", "w"), outputs)
    q = QConvParams(
        window_geometry(op, op.x, op.w, op.bias is not None, activation_eltwise(op)),
        DATA_TYPES[_value_type(op.x)],
        b.dnnl_f32,
        op.qparams("w").per_axis,
        params.x_zero_point != 0,
        False,
    )
    return q, params


@dataclass(frozen=True)
class QChoice:
    """oneDNN's int8 convolution for a `QConvParams`: source and result formats, its
    implementation, scratchpad, packed weight bytes (compensation included) and the
    compensation's bytes among them."""

    src: Format
    dst: Format
    implementation: str
    scratchpad: int
    packed: int
    compensation: int


@cache
def qconv_choice(q: QConvParams) -> QChoice | str:
    """oneDNN's fast choice for `q` with every format left to it, or why there is none."""
    try:
        pd = qconv_pd(q)
    except b.DnnlError as error:
        return f"oneDNN has no int8 convolution for it: {error}"
    reason = implementation_refusal(pd.implementation)
    if reason is not None:
        return reason
    nhwc = by_layout("data", "NHWC")
    if is_matmul(pd):  # one pixel: its channels, NHWC's bytes
        src = dst = nhwc
    else:
        # Data of one pixel per image is also nchw to oneDNN's descriptors, where it has only
        # reference code for int8 data: such data is NHWC (the same bytes).
        src, dst = (
            nhwc if math.prod(dims[2:]) == 1 else identify(pd.md(query), "data")
            for dims, query in (
                (q.geometry.src, b.dnnl_query_src_md),
                (q.geometry.dst, b.dnnl_query_dst_md),
            )
        )
    if src is None or dst is None:
        return f"oneDNN's {pd.implementation} wants a data format with no nnlayout layout"
    packed, compensation = packed_sizes(pd.md(b.dnnl_query_weights_md))
    return QChoice(src, dst, pd.implementation, pd.scratchpad_bytes, packed, compensation)


def qconv_accepts(op: Operation, target: Target, padding: bool) -> str | None:
    assert isinstance(op, QConvOp)
    reason = qconv_refusal_of(op)
    if reason is not None:
        return reason
    choice = qconv_choice(qconv_spec(op)[0])
    return choice if isinstance(choice, str) else None


def _chosen(op: QConvOp) -> QChoice:
    choice = qconv_choice(qconv_spec(op)[0])
    if isinstance(choice, str):
        raise ValueError(f"{op.name}: no fast oneDNN int8 convolution: {choice}")
    return choice


def qconv_layouts(op: Operation, target: Target) -> Layouts:
    """oneDNN's formats; a fused addend is the destination's starting contents."""
    assert isinstance(op, QConvOp)
    choice = _chosen(op)
    bias = (PLAIN_LAYOUT,) if op.bias is not None else ()
    dst = choice.dst.kernel_layout
    addend = (dst,) if isinstance(op, nn.QConv2dAddOp) else ()
    return (choice.src.kernel_layout, PLAIN_LAYOUT, *bias, *addend), (dst,)


def qconv_workspace(op: Operation, target: Target) -> int:
    assert isinstance(op, QConvOp)
    return _chosen(op).scratchpad


def qconv_packed(op: Operation) -> dict[int, tuple[int, int]]:
    """The weights' bytes in oneDNN's format and the compensation among them; none where
    the kernel refuses `op` (the weights stay plain: a reference kernel runs it)."""
    assert isinstance(op, QConvOp)
    if qconv_accepts(op, None, False) is not None:  # type: ignore[arg-type]
        return {}
    choice = _chosen(op)
    return {1: (choice.packed, choice.compensation)}


def qmatmul_packed(op: Operation) -> dict[int, tuple[int, int]]:
    """b's bytes in oneDNN's format and the compensation among them; none where the kernel
    refuses `op`."""
    assert isinstance(op, nn.QMatmulOp)
    if qmatmul_accepts(op, None, False) is not None:  # type: ignore[arg-type]
        return {}
    return {1: packed_sizes(qmatmul_pd(qmatmul_spec(op)[0]).md(b.dnnl_query_weights_md))}


def prescaled_bias(op: Operation) -> dict[int, int]:
    """The bytes of the f32 copy of the bias (operand 2) the kernel keeps, prescaled
    (`QConv.pack`, `QMatmul.pack`): the plain bias is not read after (`copied_constants`);
    none where the kernel refuses `op` or it has no bias."""
    assert isinstance(op, QConvOp | nn.QMatmulOp)
    packs = qmatmul_packed(op) if isinstance(op, nn.QMatmulOp) else qconv_packed(op)
    return {2: buffer_bytes(op.bias.type)} if packs and op.bias is not None else {}


def check_packed_claims(op: Operation, packed: Mapping[int, int]) -> None:
    """Refuses `op` where a constant it reads carries a claim this kernel does not make: of
    another kernel, on an operand it does not pack (`packed`: the bytes of each it packs),
    or of another size (a hand-edited or stale IR)."""
    chosen = kernel_of(op)
    for index, operand in enumerate(op.operands):
        constant = defining_op(operand)
        claim = None if constant is None else packed_of(constant)
        if claim is None or chosen is None:
            continue
        size = packed.get(index)
        if claim.kernel != chosen.kernel_name.data or claim.bytes != size:
            made = "does not pack it" if size is None else f"packs it into {size}"
            raise BindingRefused(
                f"operand {index} is a constant packed for {claim.kernel} in {claim.bytes} "
                f"bytes; {chosen.kernel_name.data} {made}"
            )


def _out_array(op: Operation) -> np.ndarray:
    """A new array of `op`'s result in its layout's physical shape and its element type."""
    value = op.results[0]
    spec, shape = layout_of(value.type), shape_of(value)
    return np.empty(shape if spec is None else spec.physical_shape(shape), _value_type(value))


class _Bound:
    """A quantized op's primitive bound once; its weights (and bias) packed at the first
    call and again only when another array comes (a constant is the same read-only array
    on every call; weights that are not constants are packed on every call). A call
    writes into a C-contiguous destination of the result's bytes (viewed as its type: an
    arena's bytes may come typed otherwise), else into a new array that is copied. `on`
    binds it to the arrays generated code always passes: where source and destination are
    C-contiguous and the weights constant, the primitive's memory objects are pointed at
    them once (quantized_call.py), and a call runs the primitive alone. Once constant
    weights are packed, neither keeps the plain arrays (the packed copy is all it reads;
    `packed_from` is a weak reference): the loaded program frees them
    (`lowering/program.py`)."""

    def __init__(self, kernel: QConv | QMatmul, op: Operation):
        self.kernel = kernel
        assert isinstance(op, QConvOp | nn.QMatmulOp)
        packed = (op.b if isinstance(op, nn.QMatmulOp) else op.w, op.bias)  # packed together
        constants = {op.operands[i] for i in constant_operands(op)}
        self.packed_from = PackedFrom(all(v in constants for v in packed if v is not None))
        self.types = (NUMPY_TYPES[kernel.q.src_type], NUMPY_TYPES[kernel.q.dst_type])

    def _pack(self, weights: np.ndarray, bias: Sequence[np.ndarray]) -> None:
        """Packs `weights` (and the bias) unless they were packed from these very constants
        (`PackedFrom`: other operands may change between calls)."""
        if self.packed_from.stale(weights, *bias):
            self.kernel.pack(np.ascontiguousarray(weights).view(np.int8), bias[0] if bias else None)
            self.packed_from.packed(weights, *bias)

    def _direct(self, out: np.ndarray) -> bool:
        return out.flags.c_contiguous and out.nbytes == self.kernel.compiled.nbytes(b.DNNL_ARG_DST)

    def __call__(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        x, weights, *bias = inputs
        self._pack(weights, bias)
        self._packed(x, out)

    def _packed(self, x: np.ndarray, out: np.ndarray) -> None:
        """A call on the weights packed last."""
        source = np.ascontiguousarray(x).reshape(-1).view(self.types[0])
        if self._direct(out):
            self.kernel(source, out.reshape(-1).view(self.types[1]))
        else:
            result = np.empty(out.shape, self.types[1])
            self.kernel(source, result.reshape(-1))
            out[...] = result.view(out.dtype)

    def on(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> FixedCall:
        x, weights, *bias = inputs
        if not self.packed_from.constant:
            return partial(self, inputs, out)
        self._pack(weights, bias)
        if not (x.flags.c_contiguous and self._direct(out)):
            return partial(self._packed, x, out)
        return self.kernel.bind(
            x.reshape(-1).view(self.types[0]), out.reshape(-1).view(self.types[1])
        )


def _same_buffer(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether `a` and `b` are the very same bytes (an in-place pair the plan made)."""
    return (
        a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
        and a.nbytes == b.nbytes
    )


class _SumBound(_Bound):
    """`nn.qconv2d_add`'s convolution bound once: oneDNN's sum post-op adds what the
    destination holds, so the addend (its last input) is copied there first unless the
    memory plan put the result over it (in place), where the bound call runs alone."""

    def __call__(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        *conv, addend = inputs
        self._pack(conv[1], conv[2:])
        self._summed(conv[0], addend, out)

    def _summed(self, x: np.ndarray, addend: np.ndarray, out: np.ndarray) -> None:
        """A call on the weights packed last."""
        source = np.ascontiguousarray(x).reshape(-1).view(self.types[0])
        summand = np.ascontiguousarray(addend).reshape(-1).view(np.uint8)
        if self._direct(out):
            target = out.reshape(-1).view(np.uint8)
            if not _same_buffer(target, summand):
                target[...] = summand
            self.kernel(source, target.view(self.types[1]))
        else:
            result = summand.copy()
            self.kernel(source, result.view(self.types[1]))
            out[...] = result.view(out.dtype).reshape(out.shape)

    def on(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> FixedCall:
        *conv, addend = inputs
        x, weights, *bias = conv
        if not self.packed_from.constant:
            return partial(self, inputs, out)
        self._pack(weights, bias)
        fixed = (
            x.flags.c_contiguous
            and addend.flags.c_contiguous
            and self._direct(out)
            and _same_buffer(addend, out)
        )
        if not fixed:
            return partial(self._summed, x, addend, out)
        return self.kernel.bind(
            x.reshape(-1).view(self.types[0]), out.reshape(-1).view(self.types[1])
        )


def prepare_qconv(op: Operation, session: BindingSession | None = None) -> _Bound:
    """`op` bound: its primitive made for the formats its types carry."""
    assert isinstance(op, QConvOp)
    reason = qconv_refusal_of(op)
    if reason is None and isinstance(op, nn.QConv2dAddOp):
        reason = addend_types_reason(op)
    if reason is not None:
        raise BindingRefused(reason)
    q, params = qconv_spec(op)
    formats = (format_of(op.x, "data").value, ANY, format_of(op.output, "data").value)
    bound = _SumBound if isinstance(op, nn.QConv2dAddOp) else _Bound
    try:
        conv = QConv(q, None, None, params, formats)
    except b.DnnlError as error:
        raise BindingRefused(f"oneDNN has no int8 convolution for it as typed: {error}") from None
    check_packed_claims(op, {1: conv.packed_bytes})
    return bound(conv, op)


# -------------------------------------------------------------------------- matmul
def qmatmul_spec(op: nn.QMatmulOp) -> tuple[QMatmulParams, QuantParams, int]:
    """`op` in oneDNN's terms (a's leading axes as one axis of rows: the same bytes, and
    one product rather than a batch of one-row products for torch's [L, 1, E] attention
    inputs; its activation an eltwise post-op on the real result, which oneDNN then
    quantizes with its scales), its parameters and b's zero point."""
    a_shape, (k, n) = as_rows(shape_of(op.a)), shape_of(op.b)
    params = _params(op, ("a", "b", "y"), n)
    b_zero_point = int(np.asarray(op.qparams("b").zero_point).reshape(-1)[0])
    q = QMatmulParams(
        a_shape,
        (k, n),
        op.bias is not None,
        DATA_TYPES[_value_type(op.a)],
        DATA_TYPES[_value_type(op.output)],
        op.qparams("b").per_axis,
        params.x_zero_point != 0,
        b_zero_point != 0,
        params.y_zero_point != 0,
        activation_eltwise(op),
    )
    return q, params, b_zero_point


def qmatmul_accepts(op: Operation, target: Target, padding: bool) -> str | None:
    assert isinstance(op, nn.QMatmulOp)
    reason = qmatmul_refusal(
        _value_type(op.a),
        _value_type(op.b),
        np.asarray(op.qparams("b").zero_point),
        len(shape_of(op.a)),
        len(shape_of(op.b)),
    )
    if reason is not None:
        return reason
    if op.clamp_min is not None or op.clamp_max is not None:
        return "a clamp (the kernel has no post-op for it yet)"
    if DATA_TYPES.get(_value_type(op.output)) not in INT8:
        return f"the result is {_value_type(op.output)}; the kernel writes u8 or s8"
    return qmatmul_choice(qmatmul_spec(op)[0])


def qmatmul_dispatch_refusal(op: Operation, target: Target, padding: bool) -> str | None:
    """`qmatmul_accepts`, and, for a product without bias, a b that is a constant: one
    computed at run time would be packed on every call (qmatmul_runtime_b_onednn reads it
    where it lies; it adds no bias)."""
    assert isinstance(op, nn.QMatmulOp)
    if op.bias is None and not is_constant_operand(op, op.b):
        return "b is computed at run time (the kernel packs a constant b once)"
    return qmatmul_accepts(op, target, padding)


@cache
def qmatmul_choice(q: QMatmulParams) -> str | None:
    """Why oneDNN has no fast and exact int8 matmul for `q` (None: it has)."""
    try:
        return implementation_refusal(qmatmul_pd(q).implementation)
    except b.DnnlError as error:
        return f"oneDNN has no int8 matmul for it: {error}"


def prepare_qmatmul(op: Operation, session: BindingSession | None = None) -> _Bound:
    assert isinstance(op, nn.QMatmulOp)
    reason = qmatmul_accepts(op, None, False)  # type: ignore[arg-type]
    if reason is not None:
        raise BindingRefused(reason)
    q, params, b_zero_point = qmatmul_spec(op)
    product = QMatmul(q, None, None, params, b_zero_point)
    check_packed_claims(op, {1: product.packed_bytes})
    return _Bound(product, op)


# ------------------------------------------------------------------------ registry
def _run(prepare: object, op: Operation, inputs: Sequence[np.ndarray]) -> np.ndarray:
    out = _out_array(op)
    prepare(op)(inputs, out)  # type: ignore[operator]
    return out


def _implementation(op: Operation) -> str:
    """The oneDNN implementation that runs `op` as typed (its formats)."""
    if isinstance(op, QConvOp):
        formats = (format_of(op.x, "data").value, ANY, format_of(op.output, "data").value)
        return qconv_pd(qconv_spec(op)[0], *formats).implementation
    return qmatmul_pd(qmatmul_spec(op)[0]).implementation


def quantized_kernels(family: str) -> list[Kernel]:
    """The descriptors of the quantized ops' oneDNN kernels."""
    conv = dict(
        impl=partial(_run, prepare_qconv),
        accepts=qconv_accepts,
        layouts=qconv_layouts,
        workspace=qconv_workspace,
        reads_halo=False,
        writes_strided=False,
        prepare=prepare_qconv,
        integer_data=True,
        implementation_of=_implementation,
        packed_constants=qconv_packed,
        packed_operands=(1,),
        copied_constants=prescaled_bias,
    )
    return [
        Kernel("qconv2d_onednn", nn.QConv2dOp, family, post_ops=True, **conv),  # type: ignore[arg-type]
        Kernel("qconv2d_to_float_onednn", nn.QConv2dToFloatOp, family, **conv),  # type: ignore[arg-type]
        Kernel(
            "qconv2d_add_onednn",
            nn.QConv2dAddOp,
            family,
            accepts_types=addend_types_reason,
            in_place_of=lambda op: op.addend_index,  # type: ignore[attr-defined]
            **conv,  # type: ignore[arg-type]
        ),
        Kernel(
            "qmatmul_onednn",
            nn.QMatmulOp,
            family,
            partial(_run, prepare_qmatmul),
            accepts=qmatmul_dispatch_refusal,
            layouts=lambda op, target: (
                (PLAIN_LAYOUT,) * len(op.operands),
                (PLAIN_LAYOUT,),
            ),
            reads_halo=False,
            writes_strided=False,
            workspace=lambda op, target: prepare_qmatmul(op).kernel.compiled.scratchpad_bytes,
            prepare=prepare_qmatmul,
            accepts_types=typed_as(PLAIN_LAYOUT),
            integer_data=True,
            implementation_of=_implementation,
            packed_constants=qmatmul_packed,
            packed_operands=(1,),
            copied_constants=prescaled_bias,
        ),
    ]
