"""Converters of the ONNX convolutions, Conv and ConvTranspose (2-D; 1-D as 2-D on a height-1
image; 3-D as 2-D ones over the depth taps, volumes.py), including ConvTranspose's
output_shape and auto_pad, which ONNX defines by the padding that gives the requested size."""

from __future__ import annotations

from collections.abc import Sequence

import onnx

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.state import ImportState
from nnlayout.frontends.onnx.volumes import conv3d, conv_transpose3d
from nnlayout.frontends.onnx.windows import (
    as_2d,
    checked_auto_pad,
    conv_window,
    finish_spatial,
    kernel_of_weights,
    spatial_rank,
)


def conv(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    x, w, b = state.operand(node, 0), state.operand(node, 1), state.optional_operand(node, 2)
    x, w, rank, window = conv_window(state, attrs, x, w, (1, 2, 3))
    if rank == 3:
        conv3d(state, node, x, w, b, window)
        return
    finish_spatial(state, node, state.build(lambda: nn.Conv2dOp(x, w, b, **window)), rank)


def conv_transpose(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    x, w, b = state.operand(node, 0), state.operand(node, 1), state.optional_operand(node, 2)
    rank = spatial_rank(state, x, "transposed convolution", (1, 2, 3))
    sizes, kernel = nn.shape_of(x)[2:], kernel_of_weights(state, attrs, w)
    strides = list(attrs.get("strides", [1] * rank))
    dilations = list(attrs.get("dilations", [1] * rank))
    output_padding = list(attrs.get("output_padding", [0] * rank))
    auto_pad = checked_auto_pad(state, attrs)
    pads = list(attrs.get("pads", [0] * (2 * rank))) if auto_pad == "NOTSET" else [0] * (2 * rank)
    output_shape = attrs.get("output_shape")
    same = output_shape is None and auto_pad in ("SAME_UPPER", "SAME_LOWER")
    if same:
        output_shape = [size * stride for size, stride in zip(sizes, strides, strict=True)]
    if output_shape is not None:
        # The size of each spatial axis without pads.
        naturals = [
            s * (n - 1) + p + (k - 1) * d + 1
            for n, k, s, d, p in zip(sizes, kernel, strides, dilations, output_padding, strict=True)
        ]
        pads, output_padding = _output_shape_pads(
            state, auto_pad, same, list(output_shape)[-rank:], naturals, strides, output_padding
        )
    groups = int(attrs.get("group", 1))
    if rank == 3:
        window = {"strides": strides, "pads": pads, "output_padding": output_padding}
        window |= {"dilations": dilations, "groups": groups}
        conv_transpose3d(state, node, x, w, b, window)
        return
    if rank == 1:
        x, w = as_2d(state, x), as_2d(state, w)
        strides, dilations = [1, *strides], [1, *dilations]
        pads, output_padding = [0, pads[0], 0, pads[1]], [0, *output_padding]
    finish_spatial(
        state,
        node,
        state.build(
            lambda: nn.ConvTranspose2dOp(
                x,
                w,
                b,
                strides=strides,
                pads=pads,
                output_padding=output_padding,
                dilations=dilations,
                groups=groups,
            )
        ),
        rank,
    )


def _output_shape_pads(
    state: ImportState,
    auto_pad: str,
    same: bool,
    output_shape: Sequence[int],
    naturals: Sequence[int],
    strides: Sequence[int],
    output_padding: Sequence[int],
) -> tuple[list[int], list[int]]:
    """The explicit pads ([begin..., end...]) and output_padding that give a transposed
    convolution of `naturals` sizes (without pads) the spatial `output_shape`. ONNX: total
    padding = natural size - output_shape, split as auto_pad says (the odd one at the end
    for SAME_UPPER); a negative total grows output_padding."""
    output_padding = list(output_padding)
    begins, ends = [], []
    for axis, (target, natural, stride) in enumerate(
        zip(output_shape, naturals, strides, strict=True)
    ):
        total = natural - target
        if total < 0 and same:
            # (k - 1) * d + 1 + output_padding < stride
            raise state.fail(
                f"auto_pad {auto_pad} with kernel extent + output_padding below stride "
                f"{stride} on spatial axis {axis}: the ONNX spec makes the "
                f"output input * stride ({target}), onnxruntime and "
                f"onnx's shape inference {natural}; give pads or output_shape"
            )
        if total < 0 and -total >= stride:
            raise state.fail(
                f"output_shape {target} on spatial axis {axis} is "
                f"{-total} beyond the transposed convolution's size {natural}; ONNX "
                f"allows up to stride - 1 = {stride - 1}"
            )
        if total < 0:
            output_padding[axis] -= total
            total = 0
        small, large = total // 2, total - total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else large)
        ends.append(large if auto_pad == "SAME_UPPER" else small)
    return begins + ends, output_padding
