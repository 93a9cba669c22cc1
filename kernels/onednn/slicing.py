"""Slices (`nn.slice`) as oneDNN's reorder: the window is a strided descriptor of the result's
dims over the input's bytes (the input's axis strides times the steps), starting at the
window's first element; the destination is the result's layout. It runs in whatever layout
its operand has (`"*"`) but a blocked one: plain data, or NHWC where the convolutions around a
ShuffleNet split keep their data so.

`bufferize` makes the slices whose window is one row-major run views (lowering/views.py,
no copy at all); this kernel copies the others (ViT's q/k/v thirds of the last axis, a crop
of the spatial axes). oneDNN's descriptors have no offset of their own here, so the source
memory is pointed at the window's first element: the reorder reads only the window's
elements, all inside the input. Steps must be positive (oneDNN's strides are).

A reorder copies values, NaN and signed zeros included, so it runs unguarded.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import Operation, SSAValue

from nnlayout.dialects import nn
from nnlayout.dialects.layout import buffer_bytes, buffer_type, encoding_name
from nnlayout.dialects.nn import ints, shape_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import MemoryDesc
from nnlayout.kernels.onednn.common import (
    axis_strides,
    f32_rank_reason,
    is_fast,
    op_key,
    remembered,
)
from nnlayout.kernels.onednn.movement import blocked_activations
from nnlayout.kernels.registry import BindingRefused, BindingSession, Target


def _strides(value: SSAValue) -> list[int]:
    strides = axis_strides(value)
    if strides is None:  # accepts_types refused it before anything is built
        raise BindingRefused(f"{encoding_name(value.type)} is blocked")
    return strides


def _window(op: nn.SliceOp) -> tuple[int, list[int]]:
    """The window's first element (its offset in the input, in elements) and its strides."""
    strides = _strides(op.input)
    starts, steps = ints(op.starts), ints(op.steps)
    offset = sum(start * stride for start, stride in zip(starts, strides, strict=True))
    return offset, [stride * step for stride, step in zip(strides, steps, strict=True)]


def _slice_pd(op: nn.SliceOp) -> b.PrimitiveDesc:
    output = shape_of(op.output)
    return p.reorder_pd(
        MemoryDesc.with_strides(output, _window(op)[1]),
        MemoryDesc.with_strides(output, _strides(op.output)),
    )


def _key(op: nn.SliceOp) -> tuple[object, ...]:
    return (op_key(op), encoding_name(op.input.type), encoding_name(op.output.type))


def _choice(op: nn.SliceOp) -> tuple[str, int]:
    return remembered((_key(op), "slice"), lambda: _slice_pd(op))


def slice_accepts(op: Operation, target: Target, padding: bool) -> str | None:
    """f32 of rank 1 to `MAX_RANK`, positive steps, not empty, not 4-D activations on a target
    that blocks them, then a fast implementation."""
    assert isinstance(op, nn.SliceOp)
    reason = f32_rank_reason(op)
    if reason is not None:
        return reason
    if any(step <= 0 for step in ints(op.steps)):
        return "a negative step; oneDNN's strides are positive"
    if 0 in shape_of(op.output):
        return "an empty result"
    if len(shape_of(op.output)) == 4 and blocked_activations(target):
        return (
            "the target's activations are channel-blocked, which the reorder does not read: "
            "the blocked family's slice keeps them so"
        )
    implementation, _ = _choice(op)
    return None if is_fast(implementation) else f"oneDNN chose {implementation}"


def slice_workspace(op: Operation, target: Target) -> int:
    assert isinstance(op, nn.SliceOp)
    return _choice(op)[1]


def slice_implementation(op: Operation) -> str:
    assert isinstance(op, nn.SliceOp)
    return _choice(op)[0]


class PreparedSlice:
    """A slice bound once (the registry's `prepare`): its reorder, with memory objects of its
    own, pointed at the window and the destination on each call."""

    def __init__(self, op: Operation, session: BindingSession | None = None):
        assert isinstance(op, nn.SliceOp)
        self.compiled = p.get_compiled(
            ("slice", _key(op)), lambda: _slice_pd(op), (b.DNNL_ARG_SRC, b.DNNL_ARG_DST)
        ).private()
        offset, _ = _window(op)
        self.first_byte = offset * 4
        self.input_bytes = buffer_bytes(op.input.type)
        self.output_bytes = buffer_bytes(op.output.type)
        self.scratchpad = np.empty(self.compiled.scratchpad_bytes, np.uint8)

    def __call__(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        source = np.ascontiguousarray(inputs[0], dtype=np.float32)
        if source.nbytes != self.input_bytes:
            raise ValueError(f"slice: the input has {source.nbytes} bytes, not {self.input_bytes}")
        target = out
        if not (out.flags.c_contiguous and out.dtype == np.float32):
            target = np.empty(out.shape, np.float32)
        if target.nbytes != self.output_bytes or not target.flags.writeable:
            raise ValueError(f"slice: the destination must be {self.output_bytes} writable bytes")
        memories = self.compiled.memories
        memories[b.DNNL_ARG_SRC].point_to(source.ctypes.data + self.first_byte)
        memories[b.DNNL_ARG_DST].point_to(target.ctypes.data)
        if b.DNNL_ARG_SCRATCHPAD in memories:
            memories[b.DNNL_ARG_SCRATCHPAD].point_to(self.scratchpad.ctypes.data)
        self.compiled.execute()
        if target is not out:
            out[...] = target.reshape(out.shape)


def slice_run(op: Operation, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The registry's `impl`: the slice into a new array."""
    out = np.empty(buffer_type(op.results[0].type).get_shape(), np.float32)
    PreparedSlice(op)(inputs, out)
    return out
