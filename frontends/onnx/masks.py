"""Converters of Trilu (torch's `tril`/`triu` of activations) and OneHot (`F.one_hot` of
run-time indices), each a selection by a mask, written with `nn.compare` and `nn.where`:

- Trilu at a constant k: `nn.where` of a constant mask of the last two axes, the rest 0 (so
  NaN and infinities outside the triangle become 0, as onnxruntime makes them, where a
  multiplication by 0 would give NaN);
- OneHot at a constant depth and values: each index (negative ones counted from the end)
  compared with a constant range along the new axis, on_value where equal, else off_value
  (an index out of range gives off_value everywhere).

    %y = "Trilu"(%x) {upper = 0}   ->   %y = nn.where %lower_mask, %x, %zero
"""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.dialects.builtin import i64

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.state import ImportState


def trilu(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    x = state.operand(node, 0)
    shape = nn.shape_of(x)
    if len(shape) < 2:
        raise state.fail(f"Trilu of a rank-{len(shape)} tensor; ONNX's has rank 2 or more")
    k = 0
    if len(node.input) > 1 and node.input[1]:
        k = int(state.constant_array(node.input[1], "Trilu's k").reshape(-1)[0])
    rows, columns = np.indices(shape[-2:])
    keep = columns - rows >= k if int(attrs.get("upper", 1)) else columns - rows <= k
    if keep.all():
        state.output(node, x)
        return
    dtype = nn.numpy_dtype(nn.tensor_type(x).element_type)
    mask = state.made_constant(f"{node.output[0]}.mask", keep)
    zero = state.made_constant(f"{node.output[0]}.zero", np.zeros((), dtype))
    state.output(node, state.build(lambda: nn.WhereOp(mask, x, zero)))


def one_hot(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    indices = state.operand(node, 0)
    element = nn.tensor_type(indices).element_type
    if element not in nn.ARITHMETIC_INTEGER_TYPES:
        raise state.fail(f"OneHot of {element} indices; nnlayout takes int64 and int32 ones")
    if element != i64:
        indices = state.emit(state.build(lambda: nn.CastOp(indices, i64)))
    depth = int(state.constant_array(node.input[1], "OneHot's depth").reshape(-1)[0])
    values = state.constant_array(node.input[2], "OneHot's values").reshape(-1)
    if depth < 1 or values.size != 2:
        raise state.fail(f"OneHot's depth {depth} must be positive and its values two")
    shape = list(nn.shape_of(indices))
    rank = len(shape) + 1
    axis = int(attrs.get("axis", -1))
    if not -rank <= axis < rank:
        raise state.fail(f"OneHot's axis {axis} is out of range for a rank-{rank} result")
    axis %= rank
    name = node.output[0]
    negative = state.emit(
        nn.CompareOp("lt", indices, state.made_constant(f"{name}.zero", np.int64(0)))
    )
    shifted = state.emit(nn.AddOp(indices, state.made_constant(f"{name}.depth", np.int64(depth))))
    wrapped = state.emit(nn.WhereOp(negative, shifted, indices))
    column = state.reshaped(wrapped, shape[:axis] + [1] + shape[axis:])
    places = np.arange(depth, dtype=np.int64).reshape([-1] + [1] * (rank - 1 - axis))
    hot = state.emit(nn.CompareOp("eq", column, state.made_constant(f"{name}.range", places)))
    off, on = (state.made_constant(f"{name}.{v}", values[i]) for i, v in enumerate(("off", "on")))
    state.output(node, state.build(lambda: nn.WhereOp(hot, on, off)))
