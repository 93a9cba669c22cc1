"""Converters of the ONNX operators that, on a tensor computed at run time, only rename it or
change its shape: Squeeze and Unsqueeze (axes an attribute before opset 13, a compile-time
input from then on) become `nn.reshape`, Cast to a value's own type is the value, and to float32
of an integer one (MatMulInteger's sums), and between masks and integers, `nn.cast`. On
constants these operators fold instead (see `folding`)."""

from __future__ import annotations

import onnx
from onnx import TensorProto
from xdsl.dialects.builtin import i1

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.state import ELEMENT_TYPES, ImportState


def _axes(state: ImportState, node: onnx.NodeProto, attrs: dict) -> list[int] | None:
    """The node's axes (attribute before opset 13, input from 13), or None if absent."""
    if state.opset >= 13:
        if len(node.input) > 1 and node.input[1]:
            return [int(a) for a in state.constant_array(node.input[1], "axes").ravel()]
        return None
    return [int(a) for a in attrs["axes"]] if "axes" in attrs else None


def _normalized(state: ImportState, axes: list[int], rank: int) -> list[int]:
    if any(not -rank <= a < rank for a in axes):
        raise state.fail(f"axes {axes} out of range for rank {rank}")
    normalized = [a % rank for a in axes]
    if len(set(normalized)) != len(normalized):
        raise state.fail(f"axes {axes} repeat an axis")
    return normalized


def squeeze(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    x = state.operand(node, 0)
    shape = list(nn.shape_of(x))
    axes = _axes(state, node, attrs)
    if axes is None:
        dropped = [i for i, size in enumerate(shape) if size == 1]
    else:
        dropped = _normalized(state, axes, len(shape))
        if wrong := [a for a in dropped if shape[a] != 1]:
            raise state.fail(f"cannot squeeze axis {wrong[0]} of shape {shape}: its size is not 1")
    result = [size for i, size in enumerate(shape) if i not in dropped]
    state.output(node, state.build(lambda: nn.ReshapeOp(x, result)))


def unsqueeze(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    x = state.operand(node, 0)
    axes = _axes(state, node, attrs)
    if axes is None:
        raise state.fail("Unsqueeze needs axes")
    rest = iter(nn.shape_of(x))
    inserted = _normalized(state, axes, len(nn.shape_of(x)) + len(axes))
    result = [1 if i in inserted else next(rest) for i in range(len(nn.shape_of(x)) + len(axes))]
    state.output(node, state.build(lambda: nn.ReshapeOp(x, result)))


def cast(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """Cast to the value's own type is the value (torch's quantized exports put a Cast to
    UINT8 after every QuantizeLinear to u8, and float16 and bfloat16 are computed as float32);
    to float32 (or float16 or bfloat16) of an integer value (MatMulInteger's
    sums, an int64 attention mask) or of a mask (1.0 where true), and to bool of any value
    (true where non-zero: transformers' attention masks), and to int32 or int64 of a mask or
    of the other of these (index arithmetic: RoBERTa's position ids), it is `nn.cast`."""
    to = attrs.get("to", 0)
    # A type name before opset 6 (which the checker does not check), a number from then on.
    name = to.decode(errors="replace") if isinstance(to, bytes) else str(to)
    if isinstance(to, int) and to in TensorProto.DataType.values():
        name = TensorProto.DataType.Name(to)
    x = state.operand(node, 0)
    element_type = nn.tensor_type(x).element_type
    if isinstance(to, int) and ELEMENT_TYPES.get(to) == element_type:
        state.output(node, x)
    elif name in ("FLOAT", "FLOAT16", "BFLOAT16") and element_type in (
        *nn.INTEGER_TYPES,
        *nn.NON_NUMERIC_TYPES,
    ):
        # (float16 and bfloat16 values are computed in float32: frontends/onnx/__init__.py)
        state.output(node, state.build(lambda: nn.CastOp(x)))
    elif name == "BOOL":  # a mask: true where non-zero
        state.output(node, state.build(lambda: nn.CastOp(x, ELEMENT_TYPES[TensorProto.BOOL])))
    elif name in ("INT32", "INT64") and element_type in (i1, *nn.ARITHMETIC_INTEGER_TYPES):
        wanted = ELEMENT_TYPES[getattr(TensorProto, name)]
        state.output(node, state.build(lambda: nn.CastOp(x, wanted)))
    else:
        raise state.fail(
            f"Cast of '{node.input[0]}', computed at run time, from {element_type} to {name}; "
            "nnlayout computes on float32 (quantized data: a cast keeps a value's type, or "
            "makes an integer float32), on masks and on int32 and int64 indices (a cast makes "
            "a mask or either of them int32 or int64)"
        )
