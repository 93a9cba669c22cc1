"""`nn.qmul` of an image by one value per channel (a squeeze-and-excitation gate: MobileNetV3,
EfficientNet), or by another operand that broadcasts against it, as oneDNN's binary mul,
whatever the zero points.

    y = saturate(round((a - a_zp) * a_scale * (g - g_zp) * g_scale / y_scale) + y_zp)

a is N x C x H x W, g is N x C x 1 x 1 (either operand): NHWC data. For more than one image
oneDNN v3.2 offers only its reference code, so the kernel runs one primitive of one image N
times, each on its image's slice (contiguous in NHWC). g may also be any other operand that
broadcasts against a (each of its axes 1 or a's; ConvNeXt's layer scale, a constant of one
value per channel, [1, 1, 1, C] against channels-last [1, H, W, C] data, or [C, 1, 1]):
plain data then, one call, g padded with leading axes of 1 to a's rank.

oneDNN's binary takes no source zero points (`qmul_onednn` in quantized_eltwise.py needs them
0), but with g broadcast the product is an affine function of a per value of g:

    y = saturate(round(a * f[c] + s[c])),  f = (g - g_zp) * (a_scale * g_scale / y_scale),
                                           s = y_zp - a_zp * f

so the primitive multiplies a (u8/s8) by the f32 tensor f (g's shape, broadcast) and a
binary add post-op adds s; oneDNN rounds half to even and saturates into y's type. f and s
depend on g, computed by numpy on each call (g's size) into arrays the primitive is bound
to (one row of C per image). The same real value as the reference's in another f32 order:
within one step of it. A clamp (a folded Relu or Clip) is a clip post-op after the add, as
for qadd.

A per-channel gate's operands and result are NHWC, as oneDNN's int8 convolutions write them
(the gate's NHWC is its plain order), another broadcast's plain; no channel padding.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import PLAIN_LAYOUT
from nnlayout.dialects.layout import encoding_name
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.common import Layouts, is_fast, row_major_strides
from nnlayout.kernels.onednn.formats import by_layout
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.onednn.quantized import INT8, data_type_of
from nnlayout.kernels.onednn.quantized_call import PrimitiveCall, int8_kernel
from nnlayout.kernels.onednn.quantized_eltwise import broadcast_shapes, clamp_post_ops
from nnlayout.kernels.registry import BindingRefused, FixedCall, Kernel, Target

NHWC = "NHWC"
_SHIFT = b.PostOp.binary_arg(0)
Step = tuple[dict[int, np.ndarray], np.ndarray]  # one image's sources and destination


def _gate_index(op: nn.QMulOp) -> int | None:
    """Which operand is the gate (N x C x 1 x 1 of the other's N x C x H x W, or another
    operand that broadcasts against it: `_padded`), if one is."""
    shapes = [shape_of(v) for v in op.operands]
    for index in (1, 0):
        image, gate = shapes[1 - index], shapes[index]
        padded = _padded(gate, image)
        if padded is None or image != shape_of(op.output) or padded == image:
            continue
        if all(g in (1, i) for g, i in zip(padded, image, strict=True)):
            return index
    return None


def _padded(gate: tuple[int, ...], image: tuple[int, ...]) -> tuple[int, ...] | None:
    """`gate` with leading axes of 1 to `image`'s rank (None: its rank is higher)."""
    return None if len(gate) > len(image) else (1,) * (len(image) - len(gate)) + gate


def _canonical(
    gate: tuple[int, ...], image: tuple[int, ...]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The gate and the image as oneDNN's binary is given them: `broadcast_shapes` (axes
    merged where the gate broadcasts alike), with a leading axis of 1
    where the gate's first merged axis is not broadcast, so that it is a per-channel
    broadcast, [1, C, inner] (oneDNN v3.2 has no fast code for [C, 1] against [C, inner], nor
    for [1, 1, 1, C] against [1, H, W, C] unmerged), or [outer, C] where nothing follows (its
    jit:uni binary adds a [1, C, 1] post-op's first value only)."""
    merged_gate, merged_image = broadcast_shapes([gate], image)
    if merged_gate[0] != 1:
        return (1, *merged_gate), (1, *merged_image)
    return merged_gate, merged_image


def _per_channel(op: nn.QMulOp) -> bool:
    """Whether the gate is N x C x 1 x 1 of an N x C x H x W image (NHWC data, a call per
    image), not another broadcast (plain data, one call)."""
    gate = _gate_index(op)
    assert gate is not None
    image = shape_of(op.operands[1 - gate])
    return len(image) == 4 and shape_of(op.operands[gate]) == (*image[:2], 1, 1)


def _layout(op: nn.QMulOp) -> str:
    return NHWC if _per_channel(op) else PLAIN_LAYOUT


def _rule_reason(op: Operation) -> str | None:
    """What the kernel computes: an 8-bit image times an 8-bit gate, per tensor (None when
    `op` is that)."""
    assert isinstance(op, nn.QMulOp)
    gate = _gate_index(op)
    if gate is None:
        return "no operand broadcasts against the other (the result's shape)"
    image_type = data_type_of(op.operands[1 - gate])
    if image_type not in INT8 or data_type_of(op.output) != image_type:
        return "the image and the result are not of one 8-bit type"
    if data_type_of(op.operands[gate]) not in INT8:
        return "the gate is not 8-bit"
    if any(op.qparams(side).per_axis for side in ("a", "b", "y")):
        return "a per-axis scale or zero point"
    return None


def _reason(op: Operation) -> str | None:
    """Why dispatch should not take the kernel for `op`: its rules, then a fast primitive."""
    reason = _rule_reason(op)
    if reason is None:
        try:
            implementation = _pd(op).implementation  # type: ignore[arg-type]
            if not is_fast(implementation):
                reason = f"oneDNN offers only {implementation} for it"
        except b.DnnlError as error:
            reason = f"oneDNN has no primitive for it: {error}"
    return reason


def _types_reason(op: Operation) -> str | None:
    """The layouts the values' types carry are the kernel's: image and result NHWC, the
    gate NHWC or plain (the same bytes for N x C x 1 x 1); for another broadcast, plain."""
    reason = _rule_reason(op)
    if reason is not None:
        return reason
    assert isinstance(op, nn.QMulOp)
    gate, layout = _gate_index(op), _layout(op)
    assert gate is not None
    for what, value, allowed in (
        ("the image", op.operands[1 - gate], (layout,)),
        ("the gate", op.operands[gate], (layout, PLAIN_LAYOUT)),
        ("the result", op.results[0], (layout,)),
    ):
        if encoding_name(value.type) not in allowed:
            taken = layout or "plain"
            return f"{what} is {encoding_name(value.type) or 'plain'}; the kernel takes {taken}"
    return None


def _pd(op: nn.QMulOp) -> b.PrimitiveDesc:
    """oneDNN's binary mul of one image (NHWC) by its f (f32, per channel), s added after;
    for another broadcast, of the whole (plain) by f of the gate's padded shape."""
    gate = _gate_index(op)
    assert gate is not None
    image = op.operands[1 - gate]
    if _per_channel(op):
        shape = (1, *shape_of(image)[1:])
        tag = by_layout("data", NHWC).value  # type: ignore[union-attr]
        data = b.MemoryDesc.with_tag(shape, tag, data_type_of(image))
        factors_shape = (*shape[:2], 1, 1)
        factors = b.MemoryDesc.with_tag(factors_shape, tag, b.dnnl_f32)
    else:
        factors_shape, shape = _canonical(shape_of(op.operands[gate]), shape_of(image))
        data = b.MemoryDesc.with_strides(shape, row_major_strides(shape), data_type_of(image))
        strides = row_major_strides(factors_shape)
        factors = b.MemoryDesc.with_strides(factors_shape, strides, b.dnnl_f32)
    post_ops = (b.PostOp.binary(b.dnnl_binary_add, factors_shape), *clamp_post_ops(op))
    return p.binary_pd(b.dnnl_binary_mul, data, factors, data, post_ops)


def _accepts(op: Operation, target: Target, padding: bool) -> str | None:
    return _reason(op)


def _layouts(op: Operation, target: Target) -> Layouts:
    """Image, gate and result NHWC (the gate's NHWC is its plain order) for a gate of one
    value per channel and image; plain for another broadcast."""
    assert isinstance(op, nn.QMulOp)
    layout = _layout(op)
    return (layout, layout), (layout,)


def _workspace(op: Operation, target: Target) -> int:
    """oneDNN's scratchpad and the kernel's f and s arrays (f32, one entry per gate value
    each: as large as the image's run for a broadcast gate)."""
    assert isinstance(op, nn.QMulOp)
    gate = _gate_index(op)
    assert gate is not None
    return _pd(op).scratchpad_bytes + 8 * math.prod(shape_of(op.operands[gate]))


def _implementation(op: Operation) -> str:
    return _pd(op).implementation  # type: ignore[arg-type]


class _Bound:
    """The primitive of one image, with the f and s arrays it reads (a row per image),
    refilled from the gate on each call, and called once per image."""

    def __init__(self, op: Operation):
        reason = _types_reason(op)
        if reason is not None:
            raise BindingRefused(reason)
        assert isinstance(op, nn.QMulOp)
        self.gate = _gate_index(op)
        assert self.gate is not None
        a, g, y = (op.qparams(side) for side in ("ab"[1 - self.gate], "ab"[self.gate], "y"))
        self.g_zp = np.float32(g.zero_point)
        self.multiplier = np.float32(a.scale) * np.float32(g.scale) / np.float32(y.scale)
        self.a_zp, self.y_zp = np.float32(a.zero_point), np.float32(y.zero_point)
        gate_shape = shape_of(op.operands[self.gate])
        self.images, channels = gate_shape[:2] if _per_channel(op) else (1, math.prod(gate_shape))
        self.factors = np.empty((self.images, channels), np.float32)
        self.shift = np.empty((self.images, channels), np.float32)
        try:
            pd = _pd(op)
        except b.DnnlError as error:
            raise BindingRefused(f"oneDNN has no primitive for it: {error}") from None
        compiled = Compiled(pd, (b.DNNL_ARG_SRC, b.DNNL_ARG_SRC_1, _SHIFT, b.DNNL_ARG_DST))
        self.call = PrimitiveCall(compiled, {})
        self.dtype = p.NUMPY_TYPES[data_type_of(op.output)]  # type: ignore[index]

    def _refill(self, gate: np.ndarray) -> None:
        factors, shift = self.factors.reshape(-1), self.shift.reshape(-1)
        np.subtract(gate.reshape(-1), self.g_zp, out=factors)
        factors *= self.multiplier
        np.multiply(factors, -self.a_zp, out=shift)
        shift += self.y_zp

    def _steps(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> list[Step]:
        """Per image: its slice of the image, its rows of f and s, and its slice of `out`."""
        image = np.ascontiguousarray(inputs[1 - self.gate]).reshape(self.images, -1)
        images, results = image.view(self.dtype), out.reshape(self.images, -1).view(self.dtype)
        return [
            (
                {
                    b.DNNL_ARG_SRC: images[n],
                    b.DNNL_ARG_SRC_1: self.factors[n],
                    _SHIFT: self.shift[n],
                },
                results[n],
            )
            for n in range(self.images)
        ]

    def _direct(self, out: np.ndarray) -> bool:
        one = self.call.compiled.nbytes(b.DNNL_ARG_DST)
        return out.flags.c_contiguous and out.nbytes == one * self.images

    def __call__(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        self._refill(inputs[self.gate])
        direct = self._direct(out)
        result = out if direct else np.empty(out.shape, out.dtype)
        for sources, destination in self._steps(inputs, result):
            self.call.call_on(sources, destination)
        if not direct:
            out[...] = result

    def on(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> FixedCall:
        if not (self._direct(out) and inputs[1 - self.gate].flags.c_contiguous):
            return partial(self, inputs, out)
        calls = [self.call.bind_to(*step) for step in self._steps(inputs, out)]
        gate, refill = inputs[self.gate], self._refill

        def run() -> None:
            refill(gate)
            for call in calls:
                call()

        return run


def _in_place(op: Operation) -> int | None:
    assert isinstance(op, nn.QMulOp)
    gate = _gate_index(op)
    return None if gate is None else 1 - gate


def qmul_gate_kernels(family: str) -> list[Kernel]:
    """qmul_gate_onednn: an image times one value per channel."""
    return [
        int8_kernel(
            "qmul_gate_onednn",
            nn.QMulOp,
            family,
            _Bound,
            accepts=_accepts,
            layouts=_layouts,
            workspace=_workspace,
            implementation_of=_implementation,
            applies=lambda op: _gate_index(op) is not None,  # type: ignore[arg-type]
            accepts_types=_types_reason,
            in_place_of=_in_place,
        )
    ]
