"""Blocked convolutions: `conv2d_nchwc`, one GEMM of the input's windows by weights packed
as its matrix (`IHW{b}iO{b}o`, or `IHWO{b}o` for a plain image input), and `dwconv2d_nchwc`
for depthwise ones, one multiply-add a tap."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import PLAIN_LAYOUT
from nnlayout.dialects.nn import ints, shape_of
from nnlayout.kernels.blocked.common import (
    Layouts,
    blocked_spec,
    channel_reason,
    layout_spec,
    layouts_reason,
    not_one_blocked_layout,
    prepared,
    rezero_padding,
    sliding_windows,
)
from nnlayout.kernels.blocked.options import BlockedOptions
from nnlayout.kernels.reference import IMAGE_CHANNELS, summed_per_channel
from nnlayout.kernels.registry import Kernel, Target


def _too_small(macs: int, target: Target) -> str | None:
    """Why not, where the convolution has fewer multiply-accumulates than the target blocks."""
    least = BlockedOptions.of(target).min_blocked_macs
    if macs < least:
        return f"too small to gain from blocking: {macs:,} MACs < {least:,}"
    return None


def _conv_macs(op: nn.Conv2dOp) -> int:
    n, o, oh, ow = shape_of(op.output)
    _, i, kh, kw = shape_of(op.weight)
    return n * o * oh * ow * i * kh * kw


def _conv_windows(op: nn.Conv2dOp, x: np.ndarray, kernel: Sequence[int]) -> np.ndarray:
    """[N, Cb, OH, OW, b, kH, kW] windows of an NCHW{b}c input ([N, C, OH, OW, kH, kW] of an
    NCHW one), zero-padded."""
    return sliding_windows(
        x,
        (2, 3),
        kernel,
        ints(op.strides),
        ints(op.pads),
        ints(op.dilations),
        shape_of(op.output)[2:],
        0.0,
    )


def _plain_input(op: nn.Conv2dOp, target: Target) -> bool:
    """Whether the convolution reads its input plain (NCHW), as oneDNN's fast stems read
    nchw: an ungrouped one on an image whose channels would at least double if padded to a
    block (3 -> 8 or 16: 2.7x or 5.3x the multiply-accumulates). The rule looks at channel
    counts only: a layer
    of more channels stays blocked even where padding doubles it (8 channels in 16-lane
    blocks), as such layers are usually fed by a blocked producer and reading them plain
    would cost a reorder; a layer of at most 4 channels inside a network is read plain, after
    a reorder from its producer's blocks."""
    i = shape_of(op.weight)[1]
    block = BlockedOptions.of(target).block
    return op.groups.value.data == 1 and i <= IMAGE_CHANNELS and 2 * i <= block


def _conv_accepts(op: nn.Conv2dOp, target: Target, padding: bool) -> str | None:
    """Channels padded only with padding on (input channels only where the input is
    blocked, see `_plain_input`), and for a grouped convolution not at all: each group must
    hold whole blocks of input and output channels (a block of the weights would otherwise
    mix two groups); at least `min_blocked_macs` multiply-accumulates."""
    groups = op.groups.value.data
    o, i = shape_of(op.weight)[:2]
    block = BlockedOptions.of(target).block
    if groups != 1 and (i % block or o // groups % block):
        return (
            f"grouped convolution (groups={groups}) with {i} input and {o // groups} "
            f"output channels a group, not multiples of the block {block}"
        )
    return (
        (None if _plain_input(op, target) else channel_reason("input", i, target, padding))
        or channel_reason("output", o, target, padding)
        or _too_small(_conv_macs(op), target)
    )


def _conv_layouts(op: nn.Conv2dOp, target: Target) -> Layouts:
    """NCHW{b}c input and result, IHW{b}iO{b}o weights, C{b}c bias (an image of a few
    channels plain, with IHWO{b}o weights). Weights as the GEMM's right-hand matrix, packed
    once: reduction axes (I, H, W and the input lanes, in the order the input's windows are
    gathered) before the output channels, so that no call transposes them (OIHW{b}i{b}o
    weights would cost a copy of them all per inference)."""
    options = BlockedOptions.of(target)
    if _plain_input(op, target):
        operands = (PLAIN_LAYOUT, options.plain_input_weight_layout)
    else:
        operands = (options.activation_layout, options.weight_layout)
    if op.bias is not None:
        operands += (options.channel_vector_layout,)
    return operands, (options.activation_layout,)


def conv2d_nchwc(op: nn.Conv2dOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """NCHW{b}c (or NCHW, `_plain_input`) x IHW{b}iO{b}o (IHWO{b}o) (+ C{b}c bias) ->
    NCHW{b}c, as one GEMM of the windows [N*OH*OW, (Ib, kH, kW, bi)] by the weights
    [(Ib, kH, kW, bi), (Ob, bo)] (one per group, batched, for a grouped convolution, whose
    groups hold whole blocks); keeping the lane axis innermost makes gathering the windows
    cheap. Padded weights are zero, so padded output lanes are zero unless a real input is
    Inf or NaN (0 * Inf): they are re-zeroed."""
    _check_types(op, _conv_types_reason)
    out = np.ascontiguousarray(_conv_gemm(op, inputs))
    if len(inputs) > 2:
        out += inputs[2][:, None, None, :]
    return rezero_padding(op, out)


def _conv_types_reason(op: nn.Conv2dOp) -> str | None:
    """Why conv2d_nchwc cannot read `op`'s operands as their types lay them out (None when it
    can): an NCHW{b}c result; an NCHW{b}c input, or a plain one if ungrouped; weights that
    are the GEMM's matrix for that input; a C{b}c bias. Weights in another layout
    (OIHW{b}i{b}o, say) would be misread by the GEMM."""
    result = blocked_spec(op.output)
    if result is None:
        return (
            f"result of type {op.output.type} is not channel-blocked NCHW{{b}}c; run "
            "insert-layouts before calling a blocked kernel"
        )
    blocked_input = blocked_spec(op.input)
    if blocked_input is None and (layout_spec(op.input) is not None or op.groups.value.data != 1):
        return (
            f"operand 0 of type {op.input.type} is not channel-blocked NCHW{{b}}c; run "
            "insert-layouts before calling a blocked kernel"
        )
    b = result.block_product("C")
    groups = op.groups.value.data
    o, i = shape_of(op.weight)[:2]
    if (
        groups != 1
        and blocked_input is not None
        and (i % blocked_input.block_product("C") or o // groups % b)
    ):
        return (
            f"{groups} groups of {i} input and {o // groups} output channels split the "
            f"blocks of {blocked_input.block_product('C')} and {b} lanes"
        )
    weights = (
        f"IHWO{b}o" if blocked_input is None else (f"IHW{blocked_input.block_product('C')}iO{b}o")
    )
    return layouts_reason(
        [("weights", op.weight, weights)]
        + ([] if op.bias is None else [("bias", op.bias, f"C{b}c")])
    )


def _check_types(op: Operation, reason_of: Callable[[Operation], str | None]) -> None:
    """Fails clearly where a kernel's `accepts_types` finds the arrays would not line up
    (for direct calls: the runtime asks when it binds the kernel)."""
    if (reason := reason_of(op)) is not None:
        raise ValueError(f"{op.name}: {reason}")


def _conv_gemm(op: nn.Conv2dOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """conv2d_nchwc's GEMM result without bias, as an [N, Ob, OH, OW, bo] view."""
    x, w = inputs[:2]
    _, _, kh, kw = shape_of(op.weight)
    windows = _conv_windows(op, x, (kh, kw))  # [N, Ib, OH, OW, bi, kH, kW], or without bi
    n, _, oh, ow = windows.shape[:4]
    # w: [Ib, kH, kW, bi, Ob, bo], Ib a group's, or [I, kH, kW, Ob, bo] for a plain input
    blocks, lanes = w.shape[-2:]
    groups = op.groups.value.data
    if windows.ndim == 6:
        # A plain image (ungrouped): its windows copy faster with the pixels innermost, as
        # [(I, kH, kW), N*OH*OW], used transposed, than pixels-outermost.
        # Summed one input channel at a time, as the reference does (summed_per_channel).
        cols_t = np.ascontiguousarray(windows.transpose(1, 4, 5, 0, 2, 3))
        rows, matrix = cols_t.reshape(-1, n * oh * ow).T, w.reshape(-1, blocks * lanes)
        product = summed_per_channel(windows.shape[1], lambda k: rows[:, k] @ matrix[k], kh * kw)
        return product.reshape(n, oh, ow, blocks, lanes).transpose(0, 3, 1, 2, 4)
    cols = windows.transpose(0, 2, 3, 1, 5, 6, 4).reshape(n * oh * ow, groups, -1)
    weights = w.reshape(cols.shape[2], groups, -1)
    if groups == 1:
        product = cols[:, 0] @ weights[:, 0]
    else:
        # Group g reads input blocks [g * Ib, (g + 1) * Ib) and writes output blocks
        # [g * Ob / groups, (g + 1) * Ob / groups): a batch of one GEMM per group.
        product = np.matmul(cols.transpose(1, 0, 2), weights.transpose(1, 0, 2)).transpose(1, 0, 2)
    return product.reshape(n, oh, ow, blocks, lanes).transpose(0, 3, 1, 2, 4)


def _conv_into(op: nn.Conv2dOp, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    np.copyto(out, _conv_gemm(op, inputs))
    if len(inputs) > 2:
        np.add(out, inputs[2][:, None, None, :], out=out)


def _is_depthwise(op: nn.Conv2dOp) -> bool:
    """groups == input channels == output channels: one filter per channel."""
    return op.groups.value.data == shape_of(op.input)[1] == shape_of(op.weight)[0]


def _dwconv_accepts(op: nn.Conv2dOp, target: Target, padding: bool) -> str | None:
    """Channels padded only with padding on; at least `min_blocked_macs`
    multiply-accumulates."""
    return channel_reason("input", shape_of(op.input)[1], target, padding) or _too_small(
        _conv_macs(op), target
    )


def _dwconv_layouts(op: nn.Conv2dOp, target: Target) -> Layouts:
    """NCHW{b}c input and result, OIHW{b}o weights, C{b}c bias."""
    options = BlockedOptions.of(target)
    operands = (options.activation_layout, options.depthwise_weight_layout)
    if op.bias is not None:
        operands += (options.channel_vector_layout,)
    return operands, (options.activation_layout,)


def dwconv2d_nchwc(op: nn.Conv2dOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """NCHW{b}c x OIHW{b}o (+ C{b}c bias) -> NCHW{b}c: each lane convolved with its own
    filter. Lanes never mix, so padded lanes stay 0 * 0 + 0 = 0."""
    _check_types(op, _dwconv_types_reason)
    x = inputs[0]
    out = np.empty((*x.shape[:2], *shape_of(op.output)[2:], x.shape[4]), dtype=x.dtype)
    _dwconv_into(op, inputs, out)
    return out


def _dwconv_types_reason(op: nn.Conv2dOp) -> str | None:
    """Why dwconv2d_nchwc cannot read `op`'s operands as their types lay them out (None when
    it can): NCHW{b}c input and result, OIHW{b}o weights, a C{b}c bias."""
    spec = blocked_spec(op.operands[0])
    if spec is None or layout_spec(op.results[0]) != spec:
        return not_one_blocked_layout(op)
    b = spec.block_product("C")
    return layouts_reason(
        [("weights", op.weight, f"OIHW{b}o")]
        + ([] if op.bias is None else [("bias", op.bias, f"C{b}c")])
    )


def _dwconv_into(op: nn.Conv2dOp, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    """The sum over the kernel's taps of the input's window at that tap times the tap's
    weights, one whole-tensor multiply-add a tap (faster than an einsum over the windows).
    It starts from +0, as the reference's matmul does: taps that are all -0 sum to +0."""
    x, w, *bias = inputs
    windows = _conv_windows(op, x, shape_of(op.weight)[2:])
    # windows [N, Cb, OH, OW, b, kH, kW], w [Cb, 1, kH, kW, b]
    out.fill(0)
    product = np.empty_like(out)
    for i in range(w.shape[2]):
        for j in range(w.shape[3]):
            np.add(
                out,
                np.multiply(windows[..., i, j], w[None, :, 0, i, j, None, None, :], out=product),
                out=out,
            )
    if bias:
        np.add(out, bias[0][:, None, None, :], out=out)


# Depthwise convolutions (a groups = 1 convolution of one channel among them) go to the
# depthwise kernel, all others to conv2d_nchwc.
KERNELS: tuple[Kernel, ...] = (
    Kernel(
        "conv2d_nchwc",
        nn.Conv2dOp,
        "blocked",
        conv2d_nchwc,
        applies=lambda op: not _is_depthwise(op),
        accepts=_conv_accepts,
        layouts=_conv_layouts,
        accepts_types=_conv_types_reason,
        prepare=prepared(_conv_into, conv2d_nchwc),
    ),
    Kernel(
        "dwconv2d_nchwc",
        nn.Conv2dOp,
        "blocked",
        dwconv2d_nchwc,
        applies=_is_depthwise,
        accepts=_dwconv_accepts,
        layouts=_dwconv_layouts,
        accepts_types=_dwconv_types_reason,
        prepare=prepared(_dwconv_into, dwconv2d_nchwc, rezero=False),
    ),
)
