"""Converters of ArgMax, ArgMin (torch's `argmax`, `max(dim)[1]`) and TopK (`topk`, and
`sort`, which both exporters write as a TopK of the whole axis): `nn.argmax`/`nn.argmin`
(a reshape after where keepdims is 0), and `nn.topk`'s indices with the values gathered
from the input at them (`nn.gather` at their flat positions, only where something reads
the values). TopK's `sorted=0` leaves the order to the implementation; nnlayout's is the
sorted one."""

from __future__ import annotations

import onnx

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.movement import flat_gather, flat_positions, normal_axis
from nnlayout.frontends.onnx.state import ImportState


def arg_extremum(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    x = state.operand(node, 0)
    shape = nn.shape_of(x)
    axis = normal_axis(state, attrs.get("axis", 0), len(shape))
    last = bool(int(attrs.get("select_last_index", 0)))
    op_type = nn.ArgMaxOp if node.op_type == "ArgMax" else nn.ArgMinOp
    index = state.emit(state.build(lambda: op_type(x, axis, last)))
    if not int(attrs.get("keepdims", 1)):
        index = state.reshaped(index, [d for i, d in enumerate(shape) if i != axis])
    state.output(node, index)


def topk(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    x = state.operand(node, 0)
    shape = nn.shape_of(x)
    axis = normal_axis(state, attrs.get("axis", -1), len(shape))
    if state.opset < 10:
        k = int(attrs.get("k", 0))
    else:
        k = int(state.constant_array(node.input[1], "TopK's K").reshape(-1)[0])
    if not 1 <= k <= shape[axis]:
        raise state.fail(f"TopK's K {k} must be between 1 and the axis' size {shape[axis]}")
    smallest = not int(attrs.get("largest", 1))
    indices = state.emit(state.build(lambda: nn.TopKOp(x, axis, k, smallest)))
    if node.output[0] in state.read:
        at = flat_positions(state, node, indices, shape, axis, checked=False)
        state.output(node, flat_gather(state, x, at))
    if len(node.output) > 1 and node.output[1]:
        state.output(node, indices, 1)
