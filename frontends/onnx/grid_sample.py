"""The ONNX GridSample converter (torch's `F.grid_sample`: spatial transformers, optical flow
warps, deformable attention): `nn.grid_sample` of 4-D data. Opset 16 names the modes
bilinear, nearest and bicubic; opset 20 linear, nearest and cubic."""

from __future__ import annotations

import onnx

from nnlayout.dialects import nn
from nnlayout.dialects.nn.movement import GRID_SAMPLE_PADDINGS
from nnlayout.frontends.onnx.common import text_attribute
from nnlayout.frontends.onnx.state import ImportState

_MODES = {"bilinear": "linear", "bicubic": "cubic", "linear": "linear", "cubic": "cubic"}


def grid_sample(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    x, grid = state.operand(node, 0), state.operand(node, 1)
    mode = text_attribute(attrs, "mode", "bilinear" if state.opset < 20 else "linear")
    mode = _MODES.get(mode, mode)
    padding = text_attribute(attrs, "padding_mode", "zeros")
    if mode not in ("nearest", "linear", "cubic"):
        raise state.fail(f"GridSample mode '{mode}' is not supported (ONNX has no such mode)")
    if padding not in GRID_SAMPLE_PADDINGS:
        raise state.fail(f"GridSample padding_mode '{padding}' is not one of ONNX's")
    if len(nn.shape_of(x)) != 4:
        raise state.fail(
            f"GridSample of rank-{len(nn.shape_of(x))} data; nnlayout samples NCHW images"
        )
    align = bool(int(attrs.get("align_corners", 0)))
    state.output(node, state.build(lambda: nn.GridSampleOp(x, grid, mode, padding, align)))
