"""`nn.conv_integer` (ONNX ConvInteger, what onnxruntime's `quantize_dynamic` makes of a Conv)
as oneDNN's int8 convolution (quantized.py's `QConv`) with an s32 result and no scales:

    y_s32 = conv(x - x_zp, w)

exact (oneDNN writes its s32 accumulator as it is when nothing scales it). x's zero point is
known only at run time (DynamicQuantizeLinear's): the rank-0 operand, passed on every call as
oneDNN's run-time source zero point (`DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC`, mask 0),
whose compensation makes the padding hold x's zero point, as ONNX's does. Source and result
are in the formats oneDNN chose (`format_tag::any`: nhwc with VNNI/AMX), the weights packed
once into its format at the first call.

Refused, with the reason (`qconv_refusal`, `qconv_choice`; the op then takes its reference
kernel): a weights zero point != 0 (oneDNN's convolutions take none: onnxruntime's default
s8 weights are symmetric, its QUInt8 ones are not), u8 weights, oneDNN code without VNNI or
AMX.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.compute import constant_operands
from nnlayout.dialects.kernel_attr import PLAIN_LAYOUT
from nnlayout.dialects.layout import layout_of
from nnlayout.dialects.nn import shape_of, tensor_type
from nnlayout.dialects.nn.integer import zero_point_values
from nnlayout.dialects.nn.quantized import numpy_dtype
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn.attributes import Quantization
from nnlayout.kernels.onednn.common import Layouts, format_of
from nnlayout.kernels.onednn.convolution import window_geometry
from nnlayout.kernels.onednn.quantized import (
    ANY,
    DATA_TYPES,
    QConv,
    QConvParams,
    QuantParams,
    qconv_pd,
    qconv_refusal,
)
from nnlayout.kernels.onednn.quantized_call import PackedFrom
from nnlayout.kernels.onednn.quantized_kernels import QChoice, qconv_choice
from nnlayout.kernels.registry import BindingRefused, BindingSession, FixedCall, Kernel, Target

_ZERO_POINT = b.DNNL_ARG_ATTR_ZERO_POINTS | b.DNNL_ARG_SRC
_NO_SCALES = QuantParams(1.0, (1.0,), 1.0)


@dataclass(frozen=True)
class IntegerConvParams(QConvParams):
    """A `QConvParams` with an s32 result and no scales: only the source's zero point."""

    @property
    def quantization(self) -> Quantization:
        return Quantization((), ((b.DNNL_ARG_SRC, 0),) if self.src_zero_point else ())


def integer_conv_spec(op: nn.ConvIntegerOp) -> IntegerConvParams:
    geometry = window_geometry(op, op.x, op.w, False)
    x_type = DATA_TYPES[numpy_dtype(tensor_type(op.x).element_type)]
    return IntegerConvParams(geometry, x_type, b.dnnl_s32, False, op.x_zero_point is not None)


def integer_conv_refusal(op: nn.ConvIntegerOp) -> str | None:
    """Why oneDNN cannot run `op` exactly (None: it can)."""
    reason = qconv_refusal(
        numpy_dtype(tensor_type(op.x).element_type),
        numpy_dtype(tensor_type(op.w).element_type),
        zero_point_values(op, "w_zero_point"),
        1,
        1,
    )
    if reason is not None:
        return reason
    choice = qconv_choice(integer_conv_spec(op))
    return choice if isinstance(choice, str) else None


def _chosen(op: Operation) -> QChoice:
    assert isinstance(op, nn.ConvIntegerOp)
    choice = qconv_choice(integer_conv_spec(op))
    if isinstance(choice, str):
        raise ValueError(f"{op.name}: no fast oneDNN int8 convolution: {choice}")
    return choice


def _layouts(op: Operation, target: Target) -> Layouts:
    choice = _chosen(op)
    zero_point = (PLAIN_LAYOUT,) if len(op.operands) == 3 else ()
    return (choice.src.kernel_layout, PLAIN_LAYOUT, *zero_point), (choice.dst.kernel_layout,)


def _formats(op: nn.ConvIntegerOp) -> tuple[int, int, int]:
    return (format_of(op.x, "data").value, ANY, format_of(op.output, "data").value)


class IntegerConv:
    """`op`'s convolution bound once (in the formats its types carry): the weights packed at
    the first call where they are a load-time constant, else on every call (`PackedFrom`),
    x's zero point set on every call."""

    def __init__(self, op: nn.ConvIntegerOp):
        self.conv = QConv(integer_conv_spec(op), None, None, _NO_SCALES, _formats(op))
        self.packed_from = PackedFrom(1 in constant_operands(op))  # w: packed once
        self.src_dtype = np.dtype(np.uint8 if self.conv.q.src_type == b.dnnl_u8 else np.int8)

    def __call__(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        x, weights, *zero_point = inputs
        conv = self.conv
        if self.packed_from.stale(weights):
            conv.pack(np.ascontiguousarray(weights).view(np.int8), None)
            self.packed_from.packed(weights)
        if zero_point:
            conv.arrays[_ZERO_POINT][0] = int(np.asarray(zero_point[0]).reshape(()))
        source = np.ascontiguousarray(x).reshape(-1).view(self.src_dtype)
        if out.flags.c_contiguous and out.nbytes == conv.compiled.nbytes(b.DNNL_ARG_DST):
            conv(source, out.reshape(-1).view(np.int32))
        else:
            result = conv.new_output()
            conv(source, result)
            out[...] = result.reshape(out.shape).view(out.dtype)

    def on(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> FixedCall:
        return partial(self, inputs, out)


def prepare_integer_conv(op: Operation, session: BindingSession | None = None) -> IntegerConv:
    assert isinstance(op, nn.ConvIntegerOp)
    reason = integer_conv_refusal(op)
    if reason is not None:
        raise BindingRefused(reason)
    try:
        return IntegerConv(op)
    except b.DnnlError as error:
        raise BindingRefused(f"oneDNN has no int8 convolution for it as typed: {error}") from None


def _accepts(op: Operation, target: Target, padding: bool) -> str | None:
    assert isinstance(op, nn.ConvIntegerOp)
    return integer_conv_refusal(op)


def _run(op: Operation, inputs: Sequence[np.ndarray]) -> np.ndarray:
    value = op.results[0]
    spec, shape = layout_of(value.type), shape_of(value)
    out = np.empty(shape if spec is None else spec.physical_shape(shape), np.int32)
    prepare_integer_conv(op)(inputs, out)
    return out


def _implementation(op: Operation) -> str:
    assert isinstance(op, nn.ConvIntegerOp)
    return qconv_pd(integer_conv_spec(op), *_formats(op)).implementation


def integer_conv_kernel(family: str) -> Kernel:
    return Kernel(
        "conv_integer_onednn",
        nn.ConvIntegerOp,
        family,
        _run,
        accepts=_accepts,
        layouts=_layouts,
        workspace=lambda op, target: _chosen(op).scratchpad,
        reads_halo=False,
        writes_strided=False,
        prepare=prepare_integer_conv,
        integer_data=True,
        implementation_of=_implementation,
    )
