"""Converters of the ONNX operators that move activations: Slice, Split and Gather (on run-time
data: constant starts, split sizes and indices) become `nn.slice` ops, Gather at run-time
indices and GatherND (at constant ones) `nn.gather`, Pad `nn.pad`, Resize and Upsample
`nn.resize`, Expand `nn.expand`. Their compile-time inputs (starts, pads, scales,
...) must be constants; the exporters' shape arithmetic that computes them is folded before
these run."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import onnx
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.common import text_attribute
from nnlayout.frontends.onnx.resize_cubic import cubic_resize
from nnlayout.frontends.onnx.state import ImportState


def normal_axis(state: ImportState, axis: int, rank: int) -> int:
    try:
        return nn.normalize_axis("axis", int(axis), rank)
    except VerifyException as error:
        raise state.fail(str(error).removeprefix("axis: ")) from None


def _ints(state: ImportState, node: onnx.NodeProto, index: int, what: str) -> list[int] | None:
    """Constant input `index` as integers; None where the node leaves it out."""
    if len(node.input) <= index or not node.input[index]:
        return None
    return [int(v) for v in state.constant_array(node.input[index], what).ravel()]


def sliced(
    state: ImportState,
    x: SSAValue,
    starts: Sequence[int],
    sizes: Sequence[int],
    steps: Sequence[int],
) -> nn.SliceOp:
    if any(size <= 0 for size in sizes):
        raise state.fail(
            f"the slice of {list(nn.shape_of(x))} has a zero-size result (sizes {list(sizes)}); "
            "empty tensors are not supported"
        )
    return state.build(lambda: nn.SliceOp(x, starts, sizes, steps))  # type: ignore[return-value]


# ------------------------------------------------------------------------ Slice
def slice_node(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    x = state.operand(node, 0)
    shape = nn.shape_of(x)
    if state.opset >= 10:
        begins = _ints(state, node, 1, "starts")
        ends = _ints(state, node, 2, "ends")
        axes = _ints(state, node, 3, "axes")
        steps = _ints(state, node, 4, "steps")
    else:
        begins, ends = list(attrs.get("starts", [])), list(attrs.get("ends", []))
        axes, steps = attrs.get("axes"), None
    if begins is None or ends is None or len(begins) != len(ends):
        raise state.fail("Slice needs as many starts as ends")
    axes = (
        list(range(len(begins)))
        if axes is None
        else [normal_axis(state, a, len(shape)) for a in axes]
    )
    steps = [1] * len(begins) if steps is None else steps
    if len({len(begins), len(axes), len(steps)}) != 1 or len(set(axes)) != len(axes):
        raise state.fail(
            f"Slice axes {axes} and steps {steps} do not match its {len(begins)} starts"
        )
    starts, sizes, strides = [0] * len(shape), list(shape), [1] * len(shape)
    for axis, begin, end, step in zip(axes, begins, ends, steps, strict=True):
        if step == 0:
            raise state.fail("Slice steps must be non-zero")
        # Python's slice clamps as ONNX does (negative indices count from the end).
        window = range(*slice(begin, end, step).indices(shape[axis]))
        starts[axis], sizes[axis], strides[axis] = window.start, len(window), step
    if sizes == list(shape) and all(s == 1 for s in strides):  # the whole tensor
        state.output(node, x)
        return
    if 0 in sizes:  # torch.roll by 0 along an axis: a part of a Concat that has no elements
        state.empty[node.output[0]] = (
            f"{state.node}: the slice of {list(shape)} has a zero-size result, sizes {sizes}"
        )
        return
    state.output(node, sliced(state, x, starts, sizes, strides))


# ------------------------------------------------------------------------ Split
def _split_sizes(state: ImportState, node: onnx.NodeProto, attrs: dict, dim: int) -> list[int]:
    parts = len(node.output)
    given = _ints(state, node, 1, "split")
    if given is None and "split" in attrs:
        given = [int(v) for v in attrs["split"]]
    if given is not None:
        if len(given) != parts or sum(given) != dim or any(v < 0 for v in given):
            raise state.fail(
                f"Split sizes {given} do not divide the axis of {dim} into {parts} outputs"
            )
        return given
    if "num_outputs" in attrs:  # opset 18: the last part may be smaller
        chunk = -(-dim // int(attrs["num_outputs"]))
        return [min(chunk, dim - i * chunk) for i in range(parts)]
    if dim % parts:
        raise state.fail(f"Split of an axis of {dim} into {parts} equal parts")
    return [dim // parts] * parts


def split(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    x = state.operand(node, 0)
    shape = nn.shape_of(x)
    axis = normal_axis(state, attrs.get("axis", 0), len(shape))
    offset = 0
    for index, size in enumerate(_split_sizes(state, node, attrs, shape[axis])):
        name = node.output[index]
        if name and name in state.read:
            starts, sizes = [0] * len(shape), list(shape)
            starts[axis], sizes[axis] = offset, size
            state.output(node, sliced(state, x, starts, sizes, [1] * len(shape)), index)
        offset += size


# ------------------------------------------------------------------------ Gather
def gather(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """Gather at constant indices: one slice where the indices step evenly (the class token: one
    index), else one slice per index joined by a concat (`nn.gather` of masks and indices,
    which no concat takes); a reshape gives the result the indices' shape. At indices
    computed at run time (token ids into an embedding table): `nn.gather`."""
    x = state.operand(node, 0)
    shape = nn.shape_of(x)
    axis = normal_axis(state, attrs.get("axis", 0), len(shape))
    if not state.is_constant(node.input[1]):
        indices_value = state.operand(node, 1)
        state.output(node, state.build(lambda: nn.GatherOp(x, indices_value, axis)))
        return
    indices = state.constant_array(node.input[1], "indices")
    dim = shape[axis]
    flat = [int(i) + dim if i < 0 else int(i) for i in indices.ravel()]
    if not flat:
        raise state.fail("Gather with no indices gives a zero-size result")
    if any(not 0 <= i < dim for i in flat):
        raise state.fail(f"Gather indices {indices.ravel().tolist()} out of range for size {dim}")

    def part(first: int, count: int, step: int) -> SSAValue:
        starts, sizes, steps = [0] * len(shape), list(shape), [1] * len(shape)
        starts[axis], sizes[axis], steps[axis] = first, count, step
        return state.emit(sliced(state, x, starts, sizes, steps))

    differences = {b - a for a, b in zip(flat, flat[1:], strict=False)}
    if len(flat) == 1 or (len(differences) == 1 and 0 not in differences):
        gathered = part(flat[0], len(flat), differences.pop() if differences else 1)
    elif nn.tensor_type(x).element_type in nn.NON_NUMERIC_TYPES:  # no concat of masks
        at = state.made_constant(f"{node.output[0]}.indices", np.array(flat, np.int64))
        gathered = state.emit(state.build(lambda: nn.GatherOp(x, at, axis)))
    else:
        pieces = [part(i, 1, 1) for i in flat]
        gathered = state.emit(state.build(lambda: nn.ConcatOp(pieces, axis)))
    result = (*shape[:axis], *indices.shape, *shape[axis + 1 :])
    if tuple(nn.shape_of(gathered)) == result:
        state.output(node, gathered)
    else:
        state.output(node, state.build(lambda: nn.ReshapeOp(gathered, result)))


def gather_elements(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """GatherElements of data computed at run time (of constants it folds): element p of the
    result is the data's at p with its `axis` coordinate replaced by the index at p. Where
    every axis of the data but that one has size 1 (transformers' buffered token type ids,
    [1, 512], read at RoBERTa's computed position ids), `nn.gather` of the data as a vector at
    the indices; otherwise at their flat positions (`flat_positions`)."""
    x, indices = state.operand(node, 0), state.operand(node, 1)
    shape, wanted = list(nn.shape_of(x)), list(nn.shape_of(indices))
    axis = normal_axis(state, attrs.get("axis", 0), len(shape))
    if len(wanted) != len(shape) or any(
        i > d for j, (i, d) in enumerate(zip(wanted, shape, strict=True)) if j != axis
    ):
        raise state.fail(f"indices of shape {wanted} for data of shape {shape}")
    if state.is_constant(node.input[1]):
        in_range(
            state, node, state.constant_array(node.input[1], "indices")[..., None], [shape[axis]]
        )
    if all(d == 1 for i, d in enumerate(shape) if i != axis):
        at = indices
    else:
        at = flat_positions(state, node, indices, shape, axis)
    state.output(node, flat_gather(state, x, at))


def flat_gather(state: ImportState, x: SSAValue, at: SSAValue) -> nn.GatherOp:
    """`nn.gather` of `x` as a vector at flat positions `at`."""
    table = state.reshaped(x, [math.prod(nn.shape_of(x))])
    return state.build(lambda: nn.GatherOp(table, at, 0))  # type: ignore[return-value]


def flat_positions(
    state: ImportState,
    node: onnx.NodeProto,
    indices: SSAValue,
    shape: Sequence[int],
    axis: int,
    checked: bool = True,
) -> SSAValue:
    """The flat positions in data of `shape` that GatherElements' and ScatterElements' run-time
    indices name: each position p of the indices with its `axis` coordinate replaced by the
    index there (checked, `checked_indices`, unless known in range: TopK's), in i64, shaped
    as the indices."""
    if nn.tensor_type(indices).element_type != nn.ARITHMETIC_INTEGER_TYPES[1]:
        raise state.fail(f"{node.op_type} indices must be int64, got {nn.tensor_type(indices)}")
    given = list(nn.shape_of(indices))
    index = checked_indices(state, node, indices, shape[axis], ".positions") if checked else indices
    strides = [math.prod(shape[j + 1 :]) for j in range(len(shape))]
    fixed = np.zeros(given, np.int64)
    for j, coordinates in enumerate(np.indices(given)):
        fixed += 0 if j == axis else coordinates * strides[j]
    stride = state.made_constant(f"{node.output[0]}.stride", np.int64(strides[axis]))
    along = state.emit(state.build(lambda: nn.MulOp(index, stride)))
    base = state.made_constant(f"{node.output[0]}.base", fixed)
    return state.emit(state.build(lambda: nn.AddOp(along, base)))


def gather_nd(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """GatherND of run-time data (the dynamo exporter's indexing of an attention mask): the
    indexed leading axes flattened into one, then `nn.gather` of it at the flat indices, which
    have the indices' shape but their last axis; computed at import from constant indices,
    else at run time (`_gather_nd_at_run_time`). With `batch_dims` b, each index also names
    its position in the b leading axes data and indices share (`_batch_columns`)."""
    x = state.operand(node, 0)
    shape = nn.shape_of(x)
    columns = _batch_columns(state, node, int(attrs.get("batch_dims", 0)))
    if not state.is_constant(node.input[1]):
        indices = state.operand(node, 1)
        if columns is not None:
            if nn.tensor_type(indices).element_type != nn.ARITHMETIC_INTEGER_TYPES[1]:
                raise state.fail(f"GatherND indices must be int64, got {nn.tensor_type(indices)}")
            batch = state.made_constant(f"{node.output[0]}.batch", columns)
            last = len(nn.shape_of(indices)) - 1
            indices = state.emit(state.build(lambda: nn.ConcatOp([batch, indices], last)))
        _gather_nd_at_run_time(state, node, x, indices)
        return
    indices = state.constant_array(node.input[1], "indices").astype(np.int64)
    if columns is not None:
        indices = np.concatenate([columns, indices], -1)
    depth = indices.shape[-1] if indices.ndim else 0
    if indices.ndim == 0 or not 1 <= depth <= len(shape):
        raise state.fail(f"GatherND indices of shape {list(indices.shape)} for {list(shape)} data")
    dims = shape[:depth]
    normal = in_range(state, node, indices, dims)
    flat = np.ravel_multi_index(tuple(np.moveaxis(normal, -1, 0)), dims).astype(np.int64)
    rows = (math.prod(dims), *shape[depth:])
    table = x if len(dims) == 1 else state.emit(state.build(lambda: nn.ReshapeOp(x, rows)))
    at = state.made_constant(f"{node.output[0]}.indices", np.asarray(flat))
    state.output(node, state.build(lambda: nn.GatherOp(table, at, 0)))


def _batch_columns(state: ImportState, node: onnx.NodeProto, batch: int) -> np.ndarray | None:
    """For GatherND's `batch_dims` b > 0: each index's coordinates in the b leading axes, as
    b more columns to put before its own (then it is a GatherND of batch_dims 0); else None."""
    if batch == 0:
        return None
    shape = list(nn.shape_of(state.operand(node, 0)))
    where = list(nn.shape_of(state.operand(node, 1)))
    if not 0 < batch < min(len(shape), len(where)) or where[:batch] != shape[:batch]:
        raise state.fail(
            f"GatherND batch_dims {batch} for indices of shape {where} and data of shape {shape}"
        )
    grid = np.indices(where[:-1])[:batch]
    return np.moveaxis(grid, 0, -1).astype(np.int64)


def in_range(
    state: ImportState, node: onnx.NodeProto, indices: np.ndarray, dims: Sequence[int]
) -> np.ndarray:
    """`indices` (last axis: one index per axis of `dims`) made non-negative, refused out of
    range."""
    sizes = np.array(dims)
    normal = np.where(indices < 0, indices + sizes, indices)
    if ((normal < 0) | (normal >= sizes)).any():
        raise state.fail(f"{node.op_type} indices out of range for the axes {list(dims)}")
    return normal


def _gather_nd_at_run_time(
    state: ImportState, node: onnx.NodeProto, x: SSAValue, indices: SSAValue
) -> None:
    """GatherND at indices computed at run time: `nn.gather` of the indexed leading axes'
    flat rows (`run_time_rows`)."""
    shape = nn.shape_of(x)
    depth = nn.shape_of(indices)[-1] if nn.shape_of(indices) else 0
    flat = run_time_rows(state, node, indices, shape)
    table_shape = (math.prod(shape[:depth]), *shape[depth:])
    table = x if depth == 1 else state.emit(state.build(lambda: nn.ReshapeOp(x, table_shape)))
    state.output(node, state.build(lambda: nn.GatherOp(table, flat, 0)))


def run_time_rows(
    state: ImportState, node: onnx.NodeProto, indices: SSAValue, shape: Sequence[int]
) -> SSAValue:
    """The flat rows that indices computed at run time (GatherND's and ScatterND's: the last
    axis one index per leading axis of `shape`) name, in i64: the sum over k of index_k *
    stride_k, each index_k first gathered from 0..size_k-1 (which counts a negative one from
    the end and refuses one out of range, as a flat row could not); shaped as the indices
    but their last axis."""
    where = nn.shape_of(indices)
    depth = where[-1] if where else 0
    if not where or not 1 <= depth <= len(shape):
        raise state.fail(f"{node.op_type} indices of shape {list(where)} for {list(shape)} data")
    if nn.tensor_type(indices).element_type != nn.ARITHMETIC_INTEGER_TYPES[1]:
        raise state.fail(f"{node.op_type} indices must be int64, got {nn.tensor_type(indices)}")
    dims, rows = shape[:depth], list(where[:-1])
    flat: SSAValue | None = None
    for k, size in enumerate(dims):
        column = indices
        if depth > 1:
            starts, sizes = [0] * len(where), [*rows, 1]
            starts[-1] = k
            column = state.emit(sliced(state, indices, starts, sizes, [1] * len(where)))
        index = checked_indices(state, node, state.reshaped(column, rows), size, f".axis{k}")
        term = index
        if k < depth - 1:
            stride = state.made_constant(
                f"{node.output[0]}.stride{k}", np.int64(math.prod(dims[k + 1 :]))
            )
            term = state.emit(state.build(lambda i=index, s=stride: nn.MulOp(i, s)))
        flat = (
            term if flat is None else state.emit(state.build(lambda a=flat, t=term: nn.AddOp(a, t)))
        )
    assert flat is not None  # depth >= 1
    return flat


def checked_indices(
    state: ImportState, node: onnx.NodeProto, indices: SSAValue, size: int, suffix: str
) -> SSAValue:
    """Run-time indices into an axis of `size`, gathered from 0..size-1: made non-negative,
    and an error at run time where one is out of range, which names the ONNX node (the
    gather's `onnx.node`)."""
    positions = state.made_constant(f"{node.output[0]}{suffix}", np.arange(size))
    check = state.build(lambda: nn.GatherOp(positions, indices, 0))
    check.attributes[nn.ONNX_NODE] = StringAttr(node.name or node.output[0])
    return state.emit(check)


# ------------------------------------------------------------------------ Pad
def _pad_amounts(state: ImportState, node: onnx.NodeProto, attrs: dict, rank: int) -> list[int]:
    """[begin_0.., end_0..] over every axis (opset 18's axes input spread out)."""
    if state.opset >= 11:
        pads = _ints(state, node, 1, "pads")
        axes = _ints(state, node, 3, "axes")
    else:
        pads, axes = attrs.get("pads", attrs.get("paddings")), None
    if pads is None:
        raise state.fail("Pad needs its pads")
    axes = list(range(rank)) if axes is None else [normal_axis(state, a, rank) for a in axes]
    if len(pads) != 2 * len(axes):
        raise state.fail(f"Pad has {len(pads)} pads for {len(axes)} axes")
    full = [0] * (2 * rank)
    for i, axis in enumerate(axes):
        full[axis], full[axis + rank] = int(pads[i]), int(pads[i + len(axes)])
    return full


def pad(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """Negative pads crop (a slice) before the positive ones pad."""
    x = state.operand(node, 0)
    shape = nn.shape_of(x)
    rank = len(shape)
    mode = text_attribute(attrs, "mode", "constant")
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise state.fail(
            f"Pad mode '{mode}' is not supported (constant, reflect, edge and wrap are)"
        )
    pads = _pad_amounts(state, node, attrs, rank)
    value = float(attrs.get("value", 0.0))
    if state.opset >= 11 and len(node.input) > 2 and node.input[2]:
        value = state.constant_scalar(node.input[2], "constant_value")
    crops = [max(0, -p) for p in pads]
    if any(crops):
        sizes = [d - crops[a] - crops[a + rank] for a, d in enumerate(shape)]
        x = state.emit(sliced(state, x, crops[:rank], sizes, [1] * rank))
    positive = [max(0, p) for p in pads]
    if not any(positive):
        state.output(node, x)
        return
    if mode == "wrap":
        state.output(node, _wrapped(state, x, positive))
        return
    state.output(node, state.build(lambda: nn.PadOp(x, positive, mode, value)))


def _wrapped(state: ImportState, x: SSAValue, pads: Sequence[int]) -> SSAValue:
    """Pad's wrap mode (torch's circular padding): along each padded axis, the axis' last
    `before` elements, then x, then its first `after`, as slices and a concat."""
    rank = len(nn.shape_of(x))
    for axis in range(rank):
        before, after, size = pads[axis], pads[axis + rank], nn.shape_of(x)[axis]
        if max(before, after) > size:
            raise state.fail(f"Pad wraps {max(before, after)} elements around an axis of {size}")
        pieces = [_part(state, x, axis, size - before, before)] if before else []
        pieces += [x] + ([_part(state, x, axis, 0, after)] if after else [])
        if len(pieces) > 1:
            x = state.emit(state.build(lambda pieces=pieces, axis=axis: nn.ConcatOp(pieces, axis)))
    return x


def _part(state: ImportState, x: SSAValue, axis: int, start: int, size: int) -> SSAValue:
    """`size` elements of `x` from `start` along `axis`."""
    starts, sizes = [0] * len(nn.shape_of(x)), list(nn.shape_of(x))
    starts[axis], sizes[axis] = start, size
    return state.emit(sliced(state, x, starts, sizes, [1] * len(sizes)))


# ------------------------------------------------------------------------ Resize
def _resize_modes(state: ImportState, attrs: dict) -> tuple[str, str, str]:
    """(mode, coordinate transformation, nearest rounding), refusing what nn.resize lacks."""
    mode = text_attribute(attrs, "mode", "nearest")
    if mode not in ("nearest", "linear", "cubic"):
        raise state.fail(f"Resize mode '{mode}' is not supported (nearest, linear and cubic are)")
    if int(attrs.get("antialias", 0)):
        raise state.fail("Resize with antialias=1 is not supported")
    legacy = state.opset < 11  # Resize-10: Upsample's asymmetric coordinates
    coordinates = text_attribute(
        attrs, "coordinate_transformation_mode", "asymmetric" if legacy else "half_pixel"
    )
    if coordinates in ("tf_crop_and_resize", "tf_half_pixel_for_nn"):
        raise state.fail(
            f"Resize coordinate_transformation_mode '{coordinates}' is not supported "
            "(half_pixel, pytorch_half_pixel, align_corners, asymmetric and "
            "half_pixel_symmetric are)"
        )
    rounding = text_attribute(attrs, "nearest_mode", "floor" if legacy else "round_prefer_floor")
    return mode, coordinates, rounding


def _resize_target(
    state: ImportState, node: onnx.NodeProto, attrs: dict, shape: Sequence[int]
) -> tuple[list[float], list[int]]:
    """Scales and sizes of every axis, from the scales or the sizes input (over `axes`)."""
    rank = len(shape)
    scale_index = 1 if state.opset < 11 else 2
    scales = _floats(state, node, scale_index, "scales")
    sizes = _ints(state, node, 3, "sizes") if state.opset >= 11 else None
    axes = [normal_axis(state, a, rank) for a in attrs.get("axes", range(rank))]
    if (scales is None) == (sizes is None):
        raise state.fail("Resize needs exactly one of scales and sizes")
    full_scales, full_sizes = [1.0] * rank, list(shape)
    if scales is not None:
        for axis, scale in zip(axes, scales, strict=True):
            full_scales[axis] = scale
            full_sizes[axis] = math.floor(shape[axis] * scale)
        return full_scales, full_sizes
    assert sizes is not None
    ratios = [size / shape[axis] for axis, size in zip(axes, sizes, strict=True)]
    policy = text_attribute(attrs, "keep_aspect_ratio_policy", "stretch")
    if policy != "stretch":  # one scale for every axis given, as onnx's reference computes
        ratio = min(ratios) if policy == "not_larger" else max(ratios)
        ratios = [ratio] * len(axes)
        sizes = [int(ratio * shape[axis] + 0.5) for axis in axes]
    for axis, size, ratio in zip(axes, sizes, ratios, strict=True):
        full_scales[axis], full_sizes[axis] = ratio, size
    return full_scales, full_sizes


def _floats(state: ImportState, node: onnx.NodeProto, index: int, what: str) -> list[float] | None:
    """A constant float input; None where it is left out or empty (Resize-11's scales when
    sizes are given)."""
    if len(node.input) <= index or not node.input[index]:
        return None
    values = state.constant_array(node.input[index], what).astype(np.float64).ravel()
    return [float(v) for v in values] if values.size else None


def _check_resized(
    state: ImportState,
    node: onnx.NodeProto,
    shape: Sequence[int],
    scales: Sequence[float],
    sizes: Sequence[int],
) -> None:
    """Refuses a resize of other than NCHW data, of its N or C axis, or to nothing."""
    if len(shape) != 4:
        raise state.fail(
            f"{node.op_type} of a rank-{len(shape)} tensor; nnlayout resizes NCHW data"
        )
    if list(sizes[:2]) != list(shape[:2]) or any(s != 1 for s in scales[:2]):
        raise state.fail(
            f"{node.op_type} to {list(sizes)} resizes the N or C axis of {list(shape)}; "
            "nnlayout resizes the spatial axes only"
        )
    if 0 in sizes:
        raise state.fail(f"{node.op_type} gives a zero-size result {list(sizes)}")


def _build_resize(
    state: ImportState,
    node: onnx.NodeProto,
    scales: Sequence[float],
    sizes: Sequence[int],
    modes: tuple[str, str, str],
) -> None:
    x = state.operand(node, 0)
    _check_resized(state, node, nn.shape_of(x), scales, sizes)
    mode, coordinates, rounding = modes
    state.output(
        node,
        state.build(lambda: nn.ResizeOp(x, sizes[2:], scales[2:], mode, coordinates, rounding)),
    )


def resize(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    modes = _resize_modes(state, attrs)
    shape = nn.shape_of(state.operand(node, 0))
    scales, sizes = _resize_target(state, node, attrs, shape)
    if state.opset < 11 and modes[0] == "nearest" and any(s < 1 for s in scales):
        raise state.fail("Resize-10 nearest downsampling (scales below 1) is not supported")
    if modes[0] == "cubic":
        _check_resized(state, node, nn.shape_of(state.operand(node, 0)), scales, sizes)
        x = state.operand(node, 0)
        state.output(node, cubic_resize(state, x, sizes, scales, modes[1], attrs))
        return
    _build_resize(state, node, scales, sizes, modes)


def upsample(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """Upsample (opset 7 to 9): asymmetric coordinates, nearest rounding down."""
    if state.opset < 7:
        raise state.fail("Upsample before opset 7 (height_scale/width_scale) is not supported")
    mode = text_attribute(attrs, "mode", "nearest")
    if mode not in ("nearest", "linear"):
        raise state.fail(f"Upsample mode '{mode}' is not supported (nearest and linear are)")
    scales = _floats(state, node, 1, "scales") if state.opset >= 9 else attrs.get("scales")
    if scales is None:
        raise state.fail("Upsample needs its scales")
    shape = nn.shape_of(state.operand(node, 0))
    if len(scales) != len(shape) or any(s < 1 for s in scales):
        raise state.fail(f"Upsample scales {list(scales)} must be >= 1, one per axis")
    sizes = [math.floor(d * s) for d, s in zip(shape, scales, strict=True)]
    _build_resize(state, node, [float(s) for s in scales], sizes, (mode, "asymmetric", "floor"))


# ------------------------------------------------------------------------ Expand
def expand(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """Expand to a constant shape (numpy's broadcast of the input's shape and it); the
    identity where that is the input's shape."""
    x = state.operand(node, 0)
    requested = _ints(state, node, 1, "shape")
    if requested is None:
        raise state.fail("Expand needs its shape")
    try:
        shape = nn.broadcast_shapes("Expand", nn.shape_of(x), tuple(requested))
    except VerifyException as error:
        raise state.fail(str(error).removeprefix("Expand: ")) from None
    if 0 in shape:
        raise state.fail(f"Expand to {list(shape)} gives a zero-size result")
    if shape == nn.shape_of(x):
        state.output(node, x)
        return
    state.output(node, state.build(lambda: nn.ExpandOp(x, shape)))
