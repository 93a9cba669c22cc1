"""Converters of the ONNX operators that rearrange a tensor: Concat, Flatten, Transpose and
Reshape (whose shape must be known at compile time)."""

from __future__ import annotations

import math

import onnx

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.state import ImportState


def concat(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """Empty inputs (zero-size slices, `ImportState.empty`) are left out: they add nothing."""
    names = [name for name in node.input if name not in state.empty] or list(node.input)
    if len(names) == 1:  # its input (torchvision's DenseNet starts each block with one)
        state.output(node, state.tensor(names[0]))
        return
    inputs = [state.tensor(name) for name in names]
    # The axis defaults to 1 before opset 4; onnx's checker requires it from then on.
    state.output(node, state.build(lambda: nn.ConcatOp(inputs, int(attrs.get("axis", 1)))))


def flatten(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    state.output(
        node,
        state.build(lambda: nn.FlattenOp(state.operand(node, 0), int(attrs.get("axis", 1)))),
    )


def transpose(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    x = state.operand(node, 0)
    perm = attrs.get("perm", list(reversed(range(len(nn.shape_of(x))))))
    state.output(node, state.build(lambda: nn.TransposeOp(x, [int(p) for p in perm])))


def reshape(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    x = state.operand(node, 0)
    source = nn.shape_of(x)
    if state.opset >= 5:  # onnx's checker requires the input
        requested = [int(v) for v in state.constant_array(node.input[1], "shape").ravel()]
    elif "shape" in attrs:  # an attribute before opset 5, which the checker lets go
        requested = [int(v) for v in attrs["shape"]]
    else:
        raise state.fail("Reshape before opset 5 needs a 'shape' attribute")
    if attrs.get("allowzero", 0) and 0 in requested:
        raise state.fail(
            "Reshape with allowzero=1 and a 0 entry gives an empty tensor; "
            "empty tensors are not supported"
        )
    shape = [source[i] if v == 0 else v for i, v in enumerate(requested)]
    if shape.count(-1) > 1 or any(v < -1 for v in shape):
        raise state.fail(f"invalid Reshape shape {requested}")
    if -1 in shape:
        known = math.prod(v for v in shape if v != -1)
        if known == 0 or math.prod(source) % known:
            raise state.fail(f"cannot reshape {list(source)} to {requested}")
        shape[shape.index(-1)] = math.prod(source) // known
    state.output(node, state.build(lambda: nn.ReshapeOp(x, shape)))
