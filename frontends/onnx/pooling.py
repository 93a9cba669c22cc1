"""Converters of the ONNX pooling operators: MaxPool and AveragePool (2-D; 1-D as 2-D on a
height-1 image; 3-D as two 2-D pools, volumes.py; MaxPool's Indices output as
`nn.max_pool2d_indices`), GlobalMaxPool as a max pool over the whole image, and
GlobalAveragePool."""

from __future__ import annotations

from collections.abc import Callable

import onnx
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.state import ImportState
from nnlayout.frontends.onnx.volumes import pool3d
from nnlayout.frontends.onnx.windows import (
    as_2d,
    checked_auto_pad,
    finish_spatial,
    same_padding,
    spatial_rank,
    window_attrs,
)


def _pool(
    state: ImportState,
    node: onnx.NodeProto,
    attrs: dict,
    make: Callable[..., Operation],
    indices: bool = False,
) -> None:
    """The pool `make` builds; with `indices`, MaxPool's Indices output too."""
    x = state.operand(node, 0)
    rank = spatial_rank(state, x, "pooling", (1, 2, 3))
    kernel = list(attrs["kernel_shape"])
    sizes = nn.shape_of(x)[2:]
    strides, pads, dilations = window_attrs(state, attrs, sizes, kernel)
    auto_pad = checked_auto_pad(state, attrs)
    same = auto_pad.startswith("SAME")
    for axis, (size, k, s, d) in enumerate(zip(sizes, kernel, strides, dilations, strict=True)):
        total = same_padding(size, k, s, d) if same else 0
        # ONNX leaves negative padding open. onnxruntime's AveragePool-19 crops the
        # input, at the start by total / 2 rounded toward zero (SAME_UPPER) or
        # (total + 1) / 2 (SAME_LOWER); its MaxPool and older AveragePool refuse.
        # Padding clamped to 0 crops only the end: the same windows where onnxruntime
        # crops nothing at the start.
        start = -((-total) // 2) if auto_pad == "SAME_UPPER" else -((-total - 1) // 2)
        if total < 0 and start != 0:
            raise state.fail(
                f"auto_pad {auto_pad} on spatial axis {axis} needs padding {total} "
                f"(kernel extent {(k - 1) * d + 1}, stride {s}): onnxruntime crops "
                f"{-start} at the start, which nn's pooling cannot; give pads"
            )
    ceil_mode = bool(attrs.get("ceil_mode", 0)) and not same
    if rank == 3 and indices:
        raise state.fail("MaxPool's Indices output of a 3-D pool is not supported")
    if rank == 3:
        window = {"kernel": kernel, "strides": strides, "pads": pads, "dilations": dilations}
        pool3d(state, node, x, {**window, "ceil_mode": ceil_mode}, make)
        return
    if rank == 1:
        x = as_2d(state, x)
        kernel, strides, dilations = [1, *kernel], [1, *strides], [1, *dilations]
        pads = [0, pads[0], 0, pads[1]]
    window = {
        "kernel": kernel,
        "strides": strides,
        "pads": pads,
        "dilations": dilations,
        "ceil_mode": ceil_mode,
    }
    finish_spatial(state, node, state.build(lambda: make(x, **window)), rank)
    if indices:
        column_major = bool(attrs.get("storage_order", 0))
        found = state.build(lambda: nn.MaxPool2dIndicesOp(x, **window, column_major=column_major))
        finish_spatial(state, node, found, rank, index=1)


def max_pool(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    _pool(state, node, attrs, nn.MaxPool2dOp, bool(state.read_outputs(node)))


def global_max_pool(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """A max pool whose window is the whole image."""
    _pool(state, node, {"kernel_shape": nn.shape_of(state.operand(node, 0))[2:]}, nn.MaxPool2dOp)


def average_pool(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    include = bool(attrs.get("count_include_pad", 0))
    _pool(state, node, attrs, lambda x, **kw: nn.AvgPool2dOp(x, count_include_pad=include, **kw))


def global_average_pool(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    state.output(node, state.build(lambda: nn.GlobalAvgPoolOp(state.operand(node, 0))))
