"""What convolution and pooling converters share: explicit pads for auto_pad SAME, a node's
strides, pads and dilations, and 1-D windows run as 2-D ones on a height-1 image."""

from __future__ import annotations

from collections.abc import Sequence

import onnx
from xdsl.ir import Operation, SSAValue

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.common import auto_pad_name
from nnlayout.frontends.onnx.state import ImportState


def same_pads(
    sizes: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    auto_pad: str,
) -> list[int]:
    """Explicit [begin..., end...] pads for auto_pad SAME_UPPER/SAME_LOWER (conv, pooling):
    the output is ceil(size / stride); SAME_UPPER puts the odd padding at the end."""
    begins, ends = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilations, strict=True):
        total = max(0, same_padding(size, k, s, d))
        small, large = total // 2, total - total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else large)
        ends.append(large if auto_pad == "SAME_UPPER" else small)
    return begins + ends


def same_padding(size: int, kernel: int, stride: int, dilation: int) -> int:
    """The total padding SAME needs on one axis for ceil(size / stride) windows; negative
    where the windows cover less than the input (kernel extent below the stride)."""
    return (-(-size // stride) - 1) * stride + (kernel - 1) * dilation + 1 - size


def checked_auto_pad(state: ImportState, attrs: dict) -> str:
    """The auto_pad of a Conv, ConvTranspose or pool, one of the four ONNX defines."""
    auto_pad = auto_pad_name(attrs)
    if auto_pad not in ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"):
        raise state.fail(f"unknown auto_pad '{auto_pad}' (NOTSET, SAME_UPPER, SAME_LOWER or VALID)")
    return auto_pad


def window_attrs(
    state: ImportState,
    attrs: dict,
    sizes: Sequence[int],
    kernel: Sequence[int],
) -> tuple[list[int], list[int], list[int]]:
    """strides, explicit pads ([begin..., end...]) and dilations of a Conv or pool."""
    rank = len(kernel)
    strides = list(attrs.get("strides", [1] * rank))
    dilations = list(attrs.get("dilations", [1] * rank))
    auto_pad = checked_auto_pad(state, attrs)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads = same_pads(sizes, kernel, strides, dilations, auto_pad)
    elif auto_pad == "VALID":
        pads = [0] * (2 * rank)
    else:
        pads = list(attrs.get("pads", [0] * (2 * rank)))
    return strides, pads, dilations


def spatial_rank(state: ImportState, x: SSAValue, what: str, ranks: Sequence[int] = (1, 2)) -> int:
    """The number of spatial axes of `x`, one of `ranks`; refuses others."""
    rank = len(nn.shape_of(x)) - 2
    if rank not in ranks:
        said = "; 3-D is imported as 2-D" if 3 in ranks else ""
        raise state.fail(
            f"{rank}-D {what} is not supported (nn has 2-D {what}; 1-D is imported as 2-D{said})"
        )
    return rank


def as_2d(state: ImportState, value: SSAValue) -> SSAValue:
    """[N, C, L] -> [N, C, 1, L], to run a 1-D window op as a 2-D one."""
    shape = nn.shape_of(value)
    return state.emit(nn.ReshapeOp(value, (*shape[:2], 1, shape[2])))


def finish_spatial(
    state: ImportState, node: onnx.NodeProto, op: Operation, rank: int, index: int = 0
) -> None:
    """Binds the node's output `index` to `op`'s result, reshaped back to 1-D where `rank`
    is 1."""
    if rank == 2:
        state.output(node, op, index)
    else:
        result = state.emit(op)
        shape = nn.shape_of(result)
        state.output(node, nn.ReshapeOp(result, (*shape[:2], shape[3])), index)


def kernel_of_weights(state: ImportState, attrs: dict, w: SSAValue) -> tuple[int, ...]:
    """The weights' spatial shape, which a kernel_shape attribute must repeat."""
    kernel = nn.shape_of(w)[2:]
    if "kernel_shape" in attrs and list(attrs["kernel_shape"]) != list(kernel):
        raise state.fail(
            f"kernel_shape {list(attrs['kernel_shape'])} is not the weight's "
            f"spatial shape {list(kernel)}"
        )
    return kernel


def conv_window(
    state: ImportState, attrs: dict, x: SSAValue, w: SSAValue, ranks: Sequence[int] = (1, 2)
) -> tuple[SSAValue, SSAValue, int, dict]:
    """What a Conv-like node (Conv, QLinearConv, ConvInteger) gives an nn 2-D convolution: x
    and w (a 1-D convolution's made 2-D), the spatial rank (for `finish_spatial`; one of
    `ranks`) and the window keywords (strides, pads, dilations, groups; three and six of
    them for a 3-D convolution)."""
    rank = spatial_rank(state, x, "convolution", ranks)
    kernel = kernel_of_weights(state, attrs, w)
    strides, pads, dilations = window_attrs(state, attrs, nn.shape_of(x)[2:], kernel)
    if rank == 1:
        x, w = as_2d(state, x), as_2d(state, w)
        strides, dilations, pads = [1, *strides], [1, *dilations], [0, pads[0], 0, pads[1]]
    window = {
        "strides": strides,
        "pads": pads,
        "dilations": dilations,
        "groups": int(attrs.get("group", 1)),
    }
    return x, w, rank, window
