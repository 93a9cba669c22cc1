"""Views: the data-movement ops `bufferize` turns into aliases of their operand's buffer, with
no kernel and no copy (docs/views.md).

- `nn.reshape` and `nn.flatten` of plain data: row-major data keeps its bytes through a
  reshape, so the result is `memref.reinterpret_cast` of the operand's buffer with the
  result's sizes, row-major strides and the operand's offset.
- `nn.slice` of plain data whose window is one row-major run of the operand (the axes before
  the first sliced one are 1 in the result, those after it whole, step 1 where more than one
  element is taken: ViT's class token `x[:, 0]`, ShuffleNet's channel halves of one image):
  a `memref.subview`, whose strided type names that run at its offset. Likewise a slice of
  whole images of data in any layout whose outermost axis is N (NHWC, NCHW16c): the frames
  a 3-D convolution's depth tap reads.
- `nn.transpose` whose result, in its layout, has its operand's bytes in its operand's
  layout (`transposed_same_bytes`): ConvNeXt's NHWC convolution result transposed to a plain
  [N, H, W, C], and its plain [N, H, W, C] transposed back to [N, C, H, W] in NHWC
  (propagate-layouts gives it that layout where an NHWC op reads it). The result is a
  `memref.reinterpret_cast` like a reshape's, to the result's buffer shape.
- `layout.reorder` between two layouts that put every element at the same byte, with no
  padding lanes (`same_bytes`: NCHW16c and NHWC at 16 channels, where a stem run in nChw16c
  meets the NHWC rest of a network, transforms/blocked_stem.py): a
  `memref.reinterpret_cast` to the result's buffer shape.

All need the operand's buffer to be one row-major run itself: a halo's interior or a concat's
slot is not (`bufferize` then keeps the op a kernel call), a function argument, an allocation
and a view made here are. Readers see contiguous arrays (oneDNN's primitives require them).
"""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType, NoneAttr, StridedLayoutAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from nnlayout.dialects import nn
from nnlayout.dialects.layout import (
    ReorderOp,
    buffer_type,
    encoding_name,
    layout_of,
    same_bytes,
    storage_of,
    transposed_same_bytes,
)
from nnlayout.runtime.values import memref_offset, row_major


def _plain(value: SSAValue) -> bool:
    """A dense tensor without a layout: its buffer is row-major."""
    return (
        isinstance(value.type, TensorType)
        and not encoding_name(value.type)
        and storage_of(value.type) == "dense"
    )


def _window(op: nn.SliceOp) -> tuple[list[int], list[int], list[int]] | None:
    """The subview (offsets, sizes, strides) of a slice whose window is one row-major run of
    its operand; None for any other slice."""
    shape = nn.shape_of(op.input)
    starts, sizes, steps = nn.ints(op.starts), nn.ints(op.sizes), nn.ints(op.steps)
    partial = [
        axis
        for axis, (dim, start, size, step) in enumerate(
            zip(shape, starts, sizes, steps, strict=True)
        )
        if not (start == 0 and size == dim and (step == 1 or size == 1))
    ]
    first = partial[0] if partial else len(shape)
    if any(sizes[axis] != 1 for axis in range(first)) or any(axis > first for axis in partial):
        return None
    if first < len(shape) and sizes[first] > 1 and steps[first] != 1:
        return None
    return list(starts), list(sizes), [1] * len(shape)


def _image_window(op: nn.SliceOp) -> tuple[list[int], list[int], list[int]] | None:
    """The subview of a slice of whole images (N, with step 1, the only axis it narrows) of
    data in a layout whose outermost axis in memory is N, kept by the result: one run of
    the operand's buffer (a 3-D convolution's frames read by one depth tap); None for any
    other slice."""
    spec = layout_of(op.input.type)
    if spec is None or spec != layout_of(op.output.type) or spec.dims[0] != "N":
        return None
    if storage_of(op.input.type) != "dense":
        return None
    shape = nn.shape_of(op.input)
    starts, sizes, steps = nn.ints(op.starts), nn.ints(op.sizes), nn.ints(op.steps)
    if any(
        (start, size) != (0, dim)
        for dim, start, size in zip(shape[1:], starts[1:], sizes[1:], strict=True)
    ) or (sizes[0] > 1 and steps[0] != 1):
        return None
    physical = spec.physical_shape(shape)
    offsets = [starts[0]] + [0] * (len(physical) - 1)
    return offsets, [sizes[0], *physical[1:]], [1] * len(physical)


def is_view(op: Operation) -> bool:
    """Whether `op` is a reshape, slice or transpose `bufferize` may make a view (module
    doc), as far as the op itself tells; its operand's buffer must also be one row-major run."""
    if isinstance(op, nn.ReshapeOp | nn.FlattenOp):
        return _plain(op.operands[0]) and _plain(op.results[0])
    if isinstance(op, nn.SliceOp):
        plain = _plain(op.input) and _plain(op.output) and _window(op) is not None
        return plain or _image_window(op) is not None
    if isinstance(op, nn.TransposeOp):
        return transposed_same_bytes(op.input.type, op.output.type, nn.ints(op.perm))
    if isinstance(op, ReorderOp):
        return same_bytes(op.input.type, op.output.type)
    return False


def view_op(op: Operation, source: SSAValue, source_type: MemRefType) -> Operation:
    """The memref op viewing `source` (of `source_type`, the buffer of `op`'s operand) as
    `op`'s result; `op` must be `is_view`."""
    if isinstance(op, nn.SliceOp):
        window = _window(op) if _plain(op.input) else _image_window(op)
        assert window is not None
        return memref.SubviewOp.from_static_parameters(source, source_type, *window)
    result_type = op.results[0].type
    if isinstance(op, ReorderOp) or layout_of(result_type) is not None:
        assert isinstance(result_type, TensorType)
        shape = list(buffer_type(result_type).get_shape())
    else:
        shape = list(nn.shape_of(op.results[0]))
    offset = memref_offset(source_type)
    strides = row_major(shape)
    layout: Attribute = NoneAttr() if offset == 0 else StridedLayoutAttr(strides, offset)
    result = MemRefType(source_type.element_type, shape, layout)
    return memref.ReinterpretCastOp(source, [], [], [], [offset], shape, strides, result)
