"""ONNX ScatterND and ScatterElements.

At constant indices and with no reduction the importer knows which update, if any, each row
or element of the result is, and writes the scatter as `nn.gather` of the updates and
`nn.where` of a constant mask (`_scattered`), or, where the updates are one run of rows in
order (a slice assignment), as the data's rows around them and the updates concatenated
(`_spliced`). At indices computed at run time (a key/value
cache written at the step's position: torch's `cache.index_copy(2, pos, k)` and `cache[:, :,
pos] = k`, which the dynamo exporter writes as ScatterND, the classic one as ScatterElements
and ScatterND), it is `nn.scatter` of the updates at the slices, rows or elements the
indices name, each index range-checked at run time; so is a scatter with a reduction (add,
mul, max, min: torch's index_add and scatter_reduce), at constant indices too.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from xdsl.ir import SSAValue

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.movement import (
    checked_indices,
    flat_positions,
    in_range,
    normal_axis,
    run_time_rows,
)
from nnlayout.frontends.onnx.state import ImportState


def _reduction(state: ImportState, node: onnx.NodeProto) -> str | None:
    """The scatter's reduction (add, mul, max or min), or None for none."""
    reduction = next((a.s for a in node.attribute if a.name == "reduction"), b"none")
    said = reduction.decode(errors="replace")
    if said == "none":
        return None
    if said not in nn.ScatterOp.REDUCTIONS:
        raise state.fail(f"{node.op_type} with reduction '{said}' is not supported")
    return said


def _scattered(
    state: ImportState, node: onnx.NodeProto, rows: np.ndarray, inner: list[int]
) -> None:
    """The data with row `rows[k]` replaced by update k (the last one where several write a
    row), the data and the updates seen as rows of shape `inner`: `nn.gather` of the updates
    at a constant index per row, chosen by `nn.where` of a constant mask over the data."""
    data, updates = state.operand(node, 0), state.operand(node, 2)
    shape = list(nn.shape_of(data))
    count = math.prod(shape) // math.prod(inner)
    if len(rows) and np.array_equal(rows, np.arange(rows[0], rows[0] + len(rows))):
        _spliced(state, node, int(rows[0]), len(rows), count, inner)
        return
    source, written = np.zeros(count, np.int64), np.zeros(count, np.bool_)
    for update, row in enumerate(rows):
        source[row], written[row] = update, True
    name = node.output[0]
    table = state.emit(state.build(lambda: nn.ReshapeOp(updates, [len(rows), *inner])))
    at = state.made_constant(f"{name}.sources", source)
    picked = state.emit(state.build(lambda: nn.GatherOp(table, at, 0)))
    mask = state.made_constant(f"{name}.written", written.reshape(count, *[1] * len(inner)))
    base = state.emit(state.build(lambda: nn.ReshapeOp(data, [count, *inner])))
    chosen = state.emit(state.build(lambda: nn.WhereOp(mask, picked, base)))
    state.output(node, state.build(lambda: nn.ReshapeOp(chosen, shape)))


def _spliced(
    state: ImportState, node: onnx.NodeProto, first: int, size: int, count: int, inner: list[int]
) -> None:
    """The data with its rows `first` .. `first + size` replaced by the updates, in order
    (torch's slice assignment, `attn[:, :, 1:, 1:] += rel`, as the dynamo exporter writes it:
    MViT's relative positions): the rows before, the updates and the rows after, concatenated,
    which moves each row once where a gather and a where move them all twice."""
    data, updates = state.operand(node, 0), state.operand(node, 2)
    shape = list(nn.shape_of(data))
    base = state.reshaped(data, [count, *inner])
    parts = [state.reshaped(updates, [size, *inner])]
    ones = [1] * (len(inner) + 1)
    if first:
        start = [0] * (len(inner) + 1)
        parts.insert(0, state.emit(nn.SliceOp(base, start, [first, *inner], ones)))
    if first + size < count:
        start = [first + size] + [0] * len(inner)
        sizes = [count - first - size, *inner]
        parts.append(state.emit(nn.SliceOp(base, start, sizes, ones)))
    joined = parts[0] if len(parts) == 1 else state.emit(nn.ConcatOp(parts, 0))
    state.output(node, state.reshaped(joined, shape))


def _scattered_at_run_time(
    state: ImportState,
    node: onnx.NodeProto,
    at: SSAValue,
    axis: int,
    rows: list[int] | None,
    reduction: str | None,
) -> None:
    """The data with its slices along `axis` at the indices `at` (computed at run time, or
    constants where a reduction combines them) replaced by, or combined with, the updates',
    as `nn.scatter`; with `rows` (and axis 0), data and updates seen first as rows of that
    shape."""
    data, updates = state.operand(node, 0), state.operand(node, 2)
    shape = list(nn.shape_of(data))
    count = math.prod(nn.shape_of(at))
    if rows is not None:
        data = state.reshaped(data, [math.prod(shape) // math.prod(rows), *rows])
        updates = state.reshaped(updates, [count, *rows])
    at = state.reshaped(at, [count])
    written = state.build(lambda: nn.ScatterOp(data, at, updates, axis, reduction))
    state.output(node, state.reshaped(state.emit(written), shape))


def scatter_nd(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """ScatterND: row k of the indexed leading axes replaced by (or, with a reduction,
    combined with) update k. At constant indices with no reduction (BART's shift_tokens_right,
    classic export, writes the token ids shifted by one into zeros) see `_scattered`;
    otherwise (a key/value cache written at the step's position) `nn.scatter` at their flat
    rows."""
    reduction = _reduction(state, node)
    shape = list(nn.shape_of(state.operand(node, 0)))
    where = list(nn.shape_of(state.operand(node, 1)))
    depth = where[-1] if where else 0
    expected = [*where[:-1], *shape[depth:]]
    if not 1 <= depth <= len(shape) or list(nn.shape_of(state.operand(node, 2))) != expected:
        raise state.fail(
            f"ScatterND indices of shape {where} and updates of shape "
            f"{list(nn.shape_of(state.operand(node, 2)))} for data of shape {shape}"
        )
    if not state.is_constant(node.input[1]):
        rows = run_time_rows(state, node, state.operand(node, 1), shape)
        _scattered_at_run_time(state, node, rows, 0, shape[depth:], reduction)
        return
    indices = state.constant_array(node.input[1], "indices").astype(np.int64)
    normal = in_range(state, node, indices.reshape(-1, depth), shape[:depth])
    flat = np.ravel_multi_index(tuple(normal.T), tuple(shape[:depth]))
    if reduction is None:
        _scattered(state, node, flat, shape[depth:])
        return
    at = state.made_constant(f"{node.output[0]}.rows", flat.astype(np.int64))
    _scattered_at_run_time(state, node, at, 0, shape[depth:], reduction)


def scatter_elements(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """ScatterElements: update p goes to (or, with a reduction, is combined with what is at)
    p with its `axis` coordinate replaced by the index at p. At constant indices with no
    reduction (the dynamo exporter's `select_scatter`, BART's first decoder token) see
    `_scattered`, element by element; otherwise `nn.scatter` along the axis where the
    indices are one vector broadcast over whole slices (the classic exporter's
    `cache.index_copy(2, pos, k)`), else of elements at their flat positions."""
    reduction = _reduction(state, node)
    shape = list(nn.shape_of(state.operand(node, 0)))
    axis = normal_axis(state, attrs.get("axis", 0), len(shape))
    given = list(nn.shape_of(state.operand(node, 2)))
    where = list(nn.shape_of(state.operand(node, 1)))
    if given != where or len(given) != len(shape):
        raise state.fail(
            f"ScatterElements indices of shape {where} and updates of shape "
            f"{given} for data of shape {shape}"
        )
    if any(i > d for j, (i, d) in enumerate(zip(given, shape, strict=True)) if j != axis):
        raise state.fail(f"ScatterElements indices of shape {given} for data of shape {shape}")
    if not state.is_constant(node.input[1]):
        _scatter_elements_at_run_time(state, node, shape, axis, reduction)
        return
    indices = state.constant_array(node.input[1], "indices").astype(np.int64)
    positions = np.indices(given).reshape(len(given), -1)
    positions[axis] = in_range(state, node, indices.reshape(-1, 1), [shape[axis]]).ravel()
    flat = np.ravel_multi_index(tuple(positions), tuple(shape))
    if reduction is None:
        _scattered(state, node, flat, [])
        return
    at = state.made_constant(f"{node.output[0]}.positions", flat.astype(np.int64))
    _scattered_at_run_time(state, node, at, 0, [], reduction)


def _scatter_elements_at_run_time(
    state: ImportState, node: onnx.NodeProto, shape: list[int], axis: int, reduction: str | None
) -> None:
    """ScatterElements at run-time indices, of the updates' shape (`scatter_elements` checked
    it)."""
    indices = state.operand(node, 1)
    given = list(nn.shape_of(indices))
    vector = _one_index_per_slice(indices, given, shape, axis)
    if vector is not None:
        index = checked_indices(state, node, vector, shape[axis], ".positions")
        _scattered_at_run_time(state, node, index, axis, None, reduction)
        return
    flat = flat_positions(state, node, indices, shape, axis)
    _scattered_at_run_time(state, node, flat, 0, [], reduction)


def _one_index_per_slice(
    indices: SSAValue, given: list[int], shape: list[int], axis: int
) -> SSAValue | None:
    """The indices as a vector along `axis` where they are `nn.expand` of one, over updates
    as large as the data on every other axis (then ScatterElements writes whole slices, torch's
    index_copy); else None."""
    owner = indices.owner
    if not isinstance(owner, nn.ExpandOp):
        return None
    source = nn.shape_of(owner.input)
    if len(source) != len(shape) or source[axis] != given[axis]:
        return None
    others = [j for j in range(len(shape)) if j != axis]
    if any(source[j] != 1 or given[j] != shape[j] for j in others):
        return None
    return owner.input
