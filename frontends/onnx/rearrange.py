"""Converters of the ONNX operators that rearrange elements without computing on them, each
written with `nn.reshape`, `nn.expand` and `nn.transpose`, which have kernels and layout
rules already:

- Tile (torch's `x.repeat(...)`, the classic export of `repeat_interleave`): each repeated
  axis gets a size-1 axis before it, broadcast to the repeat count, and the pair is merged;
- DepthToSpace (torch's `F.pixel_shuffle`, ESPCN's upsampling) and SpaceToDepth, in DCR
  and CRD modes: ONNX's own definitions, a reshape to rank 6, a transpose and a reshape.

    Tile(x: 1x8x4x4, repeats [1, 2, 1, 1])  ->  reshape 1x1x8x4x4, expand 1x2x8x4x4,
                                                reshape 1x16x4x4
"""

from __future__ import annotations

import onnx
from xdsl.ir import SSAValue

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.common import text_attribute
from nnlayout.frontends.onnx.state import ImportState


def _transposed(state: ImportState, x: SSAValue, perm: list[int]) -> SSAValue:
    return state.emit(state.build(lambda: nn.TransposeOp(x, perm)))


def tile(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    x = state.operand(node, 0)
    shape = nn.shape_of(x)
    repeats = [int(r) for r in state.constant_array(node.input[1], "Tile's repeats").ravel()]
    if len(repeats) != len(shape) or any(r < 1 for r in repeats):
        raise state.fail(
            f"Tile's repeats {repeats} must be one count of at least 1 per axis of "
            f"{list(shape)} (a count of 0 gives an empty tensor, which nnlayout does not have)"
        )
    if all(r == 1 for r in repeats):
        state.output(node, x)
        return
    split = [d for r, d in zip(repeats, shape, strict=True) for d in ((1, d) if r > 1 else (d,))]
    wide = [d for r, d in zip(repeats, shape, strict=True) for d in ((r, d) if r > 1 else (d,))]
    expanded = state.emit(state.build(lambda: nn.ExpandOp(state.reshaped(x, split), wide)))
    result = [r * d for r, d in zip(repeats, shape, strict=True)]
    state.output(node, state.reshaped(expanded, result))


def _image(state: ImportState, node: onnx.NodeProto, attrs: dict) -> tuple[SSAValue, int]:
    """The NCHW operand and the block size, checked."""
    x = state.operand(node, 0)
    block = int(attrs.get("blocksize", 0))
    if len(nn.shape_of(x)) != 4:
        raise state.fail(f"{node.op_type} of a rank-{len(nn.shape_of(x))} tensor; ONNX's is NCHW")
    if block < 1:
        raise state.fail(f"{node.op_type} needs a blocksize of at least 1, got {block}")
    return x, block


def _mode(state: ImportState, node: onnx.NodeProto, attrs: dict) -> str:
    mode = text_attribute(attrs, "mode", "DCR")
    if mode not in ("DCR", "CRD"):
        raise state.fail(f"{node.op_type} mode '{mode}' is not ONNX's DCR or CRD")
    return mode


def depth_to_space(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    x, b = _image(state, node, attrs)
    n, c, h, w = nn.shape_of(x)
    mode = _mode(state, node, attrs)
    if c % (b * b):
        raise state.fail(f"DepthToSpace of {c} channels by blocks of {b} x {b}")
    if mode == "DCR":
        parts, perm = [n, b, b, c // (b * b), h, w], [0, 3, 4, 1, 5, 2]
    else:
        parts, perm = [n, c // (b * b), b, b, h, w], [0, 1, 4, 2, 5, 3]
    moved = _transposed(state, state.reshaped(x, parts), perm)
    state.output(node, state.reshaped(moved, [n, c // (b * b), h * b, w * b]))


def space_to_depth(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    x, b = _image(state, node, attrs)
    n, c, h, w = nn.shape_of(x)
    if h % b or w % b:
        raise state.fail(f"SpaceToDepth of a {h} x {w} image by blocks of {b} x {b}")
    perm = [0, 3, 5, 1, 2, 4] if _mode(state, node, attrs) == "DCR" else [0, 1, 3, 5, 2, 4]
    moved = _transposed(state, state.reshaped(x, [n, c, h // b, b, w // b, b]), perm)
    state.output(node, state.reshaped(moved, [n, c * b * b, h // b, w // b]))
