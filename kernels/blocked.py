"""Blocked numpy kernels (family `blocked`): convolutions, batch norm and concat on
channel-blocked layouts (`NCHW{b}c` activations, `IHW{b}iO{b}o` weights, `C{b}c` vectors), and
element-wise and pooling kernels that run on whatever layout their operand already has (`"*"`).

The block `b` is the target's (8 on avx2, 16 on avx512) when a kernel declares its layouts, but
an implementation never assumes it: it reads the block from the `#layout.layout` encodings that
insert-layouts put on the op's operand types. Inputs arrive as physical arrays (`LayoutSpec.pack`
order, zero padding lanes); results are returned the same way, in the operand's dtype.

Padding (invariant 2): every kernel here leaves the padding lanes of its result exactly zero,
whatever the real lanes hold (NaN, Inf). Where the math alone would not (sigmoid(0) = 0.5,
0 * Inf = NaN in a convolution's padded output channels, a window of pure padding) the kernel
re-zeroes the lanes with `LayoutSpec.zero_padding` (the element-wise kernels only where
their math maps 0 elsewhere: `_zero_preserving`).

Prepared (`Kernel.prepare`): the element-wise kernels, max and average pooling, the dense and
depthwise convolutions, batch norm and concat also come bound to their op, computing straight
into the destination buffer (possibly in place, possibly a strided view) with the same result
bits, instead of returning a new array that is then copied there.

When to block (`accepts`): channel counts that are not a multiple of the block are padded only
if padding is allowed; convolutions with fewer multiply-accumulates than
`target.min_blocked_macs` stay plain, because the reorders around them cost more than blocking
gains. A convolution on an image of a few channels (`_plain_input`) reads it plain and writes
blocks: padding 3 channels to 16 would multiply its work by 5.3.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.ir import Operation, SSAValue

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import ANY_LAYOUT, PLAIN_LAYOUT
from nnlayout.dialects.layout import Block, LayoutSpec, layout_of, storage_of
from nnlayout.dialects.nn import ints, shape_of
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.registry import (
    BoundKernel,
    Kernel,
    Target,
    carried_layout_refusal,
    one_layout_refusal,
)

Layouts = tuple[tuple[str, ...], tuple[str, ...]]


# ------------------------------------------------------------------------- helpers
def _spec(value: SSAValue) -> LayoutSpec | None:
    """The layout a value's type carries; None for a plain tensor."""
    return layout_of(value.type)


def _blocked_spec(value: SSAValue) -> LayoutSpec | None:
    """The value's layout if it is channel-blocked NCHW{b}c, else None."""
    spec = _spec(value)
    if spec is None or spec.dims != ("N", "C", "H", "W", Block("C", spec.block_product("C"))):
        return None
    return spec


def _check_blocked(op: Operation) -> None:
    """Fails clearly when a channel-blocked kernel is called on an op whose operand 0 is not
    NCHW{b}c (insert-layouts did not run): the arrays would not line up."""
    if _blocked_spec(op.operands[0]) is None:
        raise ValueError(
            f"{op.name}: operand 0 of type {op.operands[0].type} is not channel-blocked "
            "NCHW{b}c; run insert-layouts before calling a blocked kernel"
        )


def _channel_reason(what: str, channels: int, target: Target, padding: bool) -> str | None:
    if channels % target.block and not padding:
        return (
            f"{channels} {what} channels are not a multiple of the block {target.block} "
            "and padding is off"
        )
    return None


def _too_small(macs: int, target: Target) -> str | None:
    if macs < target.min_blocked_macs:
        return f"too small to gain from blocking: {macs:,} MACs < {target.min_blocked_macs:,}"
    return None


def _rezero(op: Operation, physical: np.ndarray) -> np.ndarray:
    """Zeroes the padding lanes of result 0."""
    spec = _spec(op.results[0])
    return physical if spec is None else spec.zero_padding(physical, shape_of(op.results[0]))


def _padded_end(size: int, begin: int, out: int, kernel: int, stride: int, dilation: int) -> int:
    """Padding needed after a spatial axis so that all `out` windows fit (this covers the
    explicit end pad where it is used and ceil_mode's overhang past it)."""
    return max(0, (out - 1) * stride + (kernel - 1) * dilation + 1 - size - begin)


def _windows(
    x: np.ndarray,
    axes: tuple[int, int],
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    out_hw: Sequence[int],
    pad_value: float,
) -> np.ndarray:
    """Sliding windows over the spatial axes `axes` (H, W) of physical `x`, padded with
    `pad_value` (pads = [top, left, bottom, right]): the spatial axes become OH and OW in
    place, and the window offsets kH, kW are appended as the last two axes."""
    widths = [(0, 0)] * x.ndim
    for a, axis in enumerate(axes):
        widths[axis] = (
            pads[a],
            _padded_end(x.shape[axis], pads[a], out_hw[a], kernel[a], strides[a], dilations[a]),
        )
    if any(begin or end for begin, end in widths):
        x = np.pad(x, widths, constant_values=pad_value)
    extent = [(k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=True)]
    view = sliding_window_view(x, extent, axis=axes)
    index: list[slice] = [slice(None)] * view.ndim
    for a, axis in enumerate(axes):
        index[axis] = slice(0, (out_hw[a] - 1) * strides[a] + 1, strides[a])
        index[x.ndim + a] = slice(None, None, dilations[a])
    return view[tuple(index)]


def _conv_macs(op: nn.Conv2dOp) -> int:
    n, o, oh, ow = shape_of(op.output)
    _, i, kh, kw = shape_of(op.weight)
    return n * o * oh * ow * i * kh * kw


def _conv_windows(op: nn.Conv2dOp, x: np.ndarray, kernel: Sequence[int]) -> np.ndarray:
    """[N, Cb, OH, OW, b, kH, kW] windows of an NCHW{b}c input ([N, C, OH, OW, kH, kW] of an
    NCHW one), zero-padded."""
    return _windows(
        x,
        (2, 3),
        kernel,
        ints(op.strides),
        ints(op.pads),
        ints(op.dilations),
        shape_of(op.output)[2:],
        0.0,
    )


# -------------------------------------------------------------------- convolutions
# At most this many channels is an image (gray, RGB, RGBA) rather than a layer's output.
_IMAGE_CHANNELS = 4


def _plain_input(op: nn.Conv2dOp, target: Target) -> bool:
    """Whether the convolution reads its input plain (NCHW), as oneDNN's fast stems read
    nchw: an ungrouped one on an image whose channels would at least double if padded to a
    block (3 -> 8 or 16: 2.7x or 5.3x the multiply-accumulates; ResNet-50's stem took 20.5
    ms on 16-channel blocks, 4.8 plain). The rule looks at channel counts only: a layer
    of more channels stays blocked even where padding doubles it (8 channels in 16-lane
    blocks), as such layers are usually fed by a blocked producer and reading them plain
    would cost a reorder; a layer of at most 4 channels inside a network is read plain, after
    a reorder from its producer's blocks."""
    i = shape_of(op.weight)[1]
    return op.groups.value.data == 1 and i <= _IMAGE_CHANNELS and 2 * i <= target.block


def _conv_accepts(op: nn.Conv2dOp, target: Target, padding: bool) -> str | None:
    """Channels padded only with padding on (input channels only where the input is
    blocked, see `_plain_input`), and for a grouped convolution not at all: each group must
    hold whole blocks of input and output channels (a block of the weights would otherwise
    mix two groups); at least `target.min_blocked_macs` multiply-accumulates."""
    groups = op.groups.value.data
    o, i = shape_of(op.weight)[:2]
    if groups != 1 and (i % target.block or o // groups % target.block):
        return (
            f"grouped convolution (groups={groups}) with {i} input and {o // groups} "
            f"output channels a group, not multiples of the block {target.block}"
        )
    return (
        (None if _plain_input(op, target) else _channel_reason("input", i, target, padding))
        or _channel_reason("output", o, target, padding)
        or _too_small(_conv_macs(op), target)
    )


def _conv_layouts(op: nn.Conv2dOp, target: Target) -> Layouts:
    """Weights as the GEMM's right-hand matrix, packed once: reduction axes (I, H, W and the
    input lanes, in the order the input's windows are gathered) before the output channels,
    so that no call transposes them (OIHW{b}i{b}o cost a copy of all 89 MB of ResNet-50's
    convolution weights per inference)."""
    if _plain_input(op, target):
        operands = (PLAIN_LAYOUT, target.plain_input_weight_layout)
    else:
        operands = (target.activation_layout, target.weight_layout)
    if op.bias is not None:
        operands += (target.channel_vector_layout,)
    return operands, (target.activation_layout,)


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
    return _rezero(op, out)


def _conv_types_reason(op: nn.Conv2dOp) -> str | None:
    """Why conv2d_nchwc cannot read `op`'s operands as their types lay them out (None when it
    can): an NCHW{b}c result; an NCHW{b}c input, or a plain one if ungrouped; weights that
    are the GEMM's matrix for that input; a C{b}c bias. IR dispatched before the weights
    became IHW{b}iO{b}o named OIHW{b}i{b}o, which the GEMM misread."""
    result = _blocked_spec(op.output)
    if result is None:
        return (
            f"result of type {op.output.type} is not channel-blocked NCHW{{b}}c; run "
            "insert-layouts before calling a blocked kernel"
        )
    blocked_input = _blocked_spec(op.input)
    if blocked_input is None and (_spec(op.input) is not None or op.groups.value.data != 1):
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
    return _layouts_reason(
        [("weights", op.weight, weights)]
        + ([] if op.bias is None else [("bias", op.bias, f"C{b}c")])
    )


def _not_one_blocked_layout(op: Operation) -> str:
    return (
        f"input of type {op.operands[0].type} and result of type {op.results[0].type} are "
        "not both one channel-blocked NCHW{b}c; run insert-layouts before calling a "
        "blocked kernel"
    )


def _layouts_reason(wanted: Sequence[tuple[str, SSAValue, str]]) -> str | None:
    """Why not, where a value of the (what, value, layout) carries another layout than its
    own; None where none does."""
    for what, value, layout in wanted:
        spec = _spec(value)
        if spec is None or spec.text != layout:
            return (
                f"{what} in layout '{spec.text if spec else 'plain'}', not {layout} (IR "
                "dispatched by an older nnlayout, or by hand: run select-dispatch and "
                "insert-layouts on the tensor-level program again)"
            )
    return None


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
        # A plain image (ungrouped): its windows copy fast with the pixels innermost, as
        # [(I, kH, kW), N*OH*OW], used transposed (gather and GEMM of a 3x3 stem on 224x224:
        # 2.0 ms against 3.4 pixels-outermost; of ResNet-50's 7x7 one, 3.1 against 3.6).
        cols_t = np.ascontiguousarray(windows.transpose(1, 4, 5, 0, 2, 3))
        product = cols_t.reshape(-1, n * oh * ow).T @ w.reshape(-1, blocks * lanes)
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


def _is_depthwise(op: nn.Conv2dOp) -> bool:
    """groups == input channels == output channels: one filter per channel."""
    return op.groups.value.data == shape_of(op.input)[1] == shape_of(op.weight)[0]


def _dwconv_accepts(op: nn.Conv2dOp, target: Target, padding: bool) -> str | None:
    """Channels padded only with padding on; at least `target.min_blocked_macs`
    multiply-accumulates."""
    return _channel_reason("input", shape_of(op.input)[1], target, padding) or _too_small(
        _conv_macs(op), target
    )


def _dwconv_layouts(op: nn.Conv2dOp, target: Target) -> Layouts:
    operands = (target.activation_layout, target.depthwise_weight_layout)
    if op.bias is not None:
        operands += (target.channel_vector_layout,)
    return operands, (target.activation_layout,)


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
    spec = _blocked_spec(op.operands[0])
    if spec is None or _spec(op.results[0]) != spec:
        return _not_one_blocked_layout(op)
    b = spec.block_product("C")
    return _layouts_reason(
        [("weights", op.weight, f"OIHW{b}o")]
        + ([] if op.bias is None else [("bias", op.bias, f"C{b}c")])
    )


def _dwconv_into(op: nn.Conv2dOp, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    """The sum over the kernel's taps of the input's window at that tap times the tap's
    weights, one whole-tensor multiply-add a tap (2-3x faster than an einsum over the
    windows: 2.4 against 7.2 ms for 144 channels at 56x56). It starts from +0, as the
    reference's matmul does: taps that are all -0 sum to +0."""
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


# ------------------------------------------------------------------- element-wise
def _any_layouts(op: Operation, target: Target) -> Layouts:
    return (ANY_LAYOUT,) * len(op.operands), (ANY_LAYOUT,) * len(op.results)


def _any_dense_layout(op: Operation, spec: LayoutSpec) -> str | None:
    """Element-wise math does not care how lanes are arranged: any dense layout will do."""
    return None


def _dense_operands(op: Operation, target: Target, padding: bool) -> str | None:
    """`_sparse_operand` as an `accepts`."""
    return _sparse_operand(op)


def _sparse_operand(op: Operation) -> str | None:
    """Why not, where an operand is not a dense array: the result takes operand 0's storage
    ("*"), and a CSR result of hand-written IR (relu of a CSR value) left bufferize a tensor
    without a buffer."""
    for index, operand in enumerate(op.operands):
        if storage_of(operand.type) != "dense":
            return f"operand {index} is stored as {storage_of(operand.type).upper()}"
    return None


def broadcasts(op: Operation, target: Target, padding: bool) -> str | None:
    """`broadcast_reason` as an `accepts`."""
    return broadcast_reason(op)


def broadcast_reason(op: Operation) -> str | None:
    """Every operand has the result's shape, or its rank with 1 on the axes it broadcasts
    along (a squeeze-and-excitation scale [N, C, 1, 1] times [N, C, H, W]): the physical
    arrays of one layout then broadcast alike, as long as no broadcast axis is blocked
    (`broadcast_layout`). Other broadcasts (a lower rank) run the reference kernel."""
    if (reason := _sparse_operand(op)) is not None:
        return reason
    result = shape_of(op.results[0])
    for index, operand in enumerate(op.operands):
        shape = shape_of(operand)
        if len(shape) != len(result) or any(
            size not in (1, full) for size, full in zip(shape, result, strict=True)
        ):
            return (
                f"broadcasting operand {index} {list(shape)} to {list(result)} "
                f"(the kernel broadcasts axes of size 1 of an operand of the same rank)"
            )
    return None


def full_operand(op: Operation) -> int | None:
    """The first operand of the result's shape: the one a broadcasting op may overwrite
    (torchvision's scale * x: x)."""
    result = shape_of(op.results[0])
    return next((i for i, v in enumerate(op.operands) if shape_of(v) == result), None)


def broadcast_layout(op: Operation, spec: LayoutSpec) -> str | None:
    """No operand broadcasts along an axis that `spec` blocks: a block of a size-1 axis holds
    one real lane and padding, which would broadcast as zeros."""
    result = shape_of(op.results[0])
    for index, operand in enumerate(op.operands):
        shape = shape_of(operand)
        for axis, size, full in zip(spec.logical_axes, shape, result, strict=True):
            if size != full and spec.blocks_of(axis):
                return (
                    f"operand {index} {list(shape)} broadcasts along axis {axis}, which "
                    f"layout '{spec.text}' blocks"
                )
    return None


def _any_types_reason(
    op: Operation,
    shapes: Callable[[Operation], str | None],
    check: Callable[[Operation, LayoutSpec], str | None],
) -> str | None:
    """A `"*"` kernel's `accepts_types`: its shape rules (`shapes`, what its `accepts` asks),
    every operand and result in operand 0's layout, and `check` (its `accepts_layout`)
    agreeing to that layout."""
    return (
        shapes(op)
        or one_layout_refusal(op, range(len(op.operands)))
        or carried_layout_refusal(op, check)
    )


def _zero_preserving(op: Operation) -> bool:
    """Whether the op's math maps 0 to 0, so that padding lanes stay zero by themselves."""
    if isinstance(op, nn.ClipOp):
        low = -np.inf if op.min is None else op.min.value.data
        high = np.inf if op.max is None else op.max.value.data
        return low <= 0 <= high
    return _ZERO_PRESERVING[type(op)]


def elementwise_any(op: Operation, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The op's reference math applied lane by lane to the physical arrays (all in one
    layout), then padding lanes re-zeroed when the math maps 0 elsewhere."""
    out = REFERENCE_KERNELS[type(op)](op, inputs)
    return out if _zero_preserving(op) else _rezero(op, out)


# Whether f(0) == 0 (0 op 0 == 0 for binary ops); clip depends on its bounds.
_ZERO_PRESERVING: dict[type[Operation], bool] = {
    nn.ReluOp: True,
    nn.LeakyReluOp: True,
    nn.SigmoidOp: False,
    nn.TanhOp: True,
    nn.ExpOp: False,
    nn.NegOp: True,
    nn.AbsOp: True,
    nn.SqrtOp: True,
    nn.ClipOp: False,
    nn.AddOp: True,
    nn.SubOp: True,
    nn.MulOp: True,
    nn.DivOp: False,
    nn.SumOp: True,
}
_UNARY = (
    nn.ReluOp,
    nn.LeakyReluOp,
    nn.SigmoidOp,
    nn.TanhOp,
    nn.ExpOp,
    nn.NegOp,
    nn.AbsOp,
    nn.SqrtOp,
    nn.ClipOp,
)
_NARY = (nn.AddOp, nn.SubOp, nn.MulOp, nn.DivOp, nn.SumOp)


# --------------------------------------------------------------------- batch norm
def _batch_norm_accepts(op: nn.BatchNormOp, target: Target, padding: bool) -> str | None:
    """Rank-4 (NCHW) inputs; channels padded only with padding on."""
    x = shape_of(op.input)
    if len(x) != 4:
        return f"rank-{len(x)} input; the blocked kernel needs NCHW"
    return _channel_reason("input", x[1], target, padding)


def _batch_norm_types_reason(op: nn.BatchNormOp) -> str | None:
    """Why batch_norm_nchwc cannot read `op`'s operands as typed (None when it can): input
    and result in one NCHW{b}c, the four vectors in C{b}c."""
    spec = _blocked_spec(op.operands[0])
    if spec is None or _spec(op.results[0]) != spec:
        return _not_one_blocked_layout(op)
    vector = f"C{spec.block_product('C')}c"
    return _layouts_reason(
        [
            (name, value, vector)
            for name, value in zip(
                ("scale", "bias", "mean", "variance"), op.operands[1:], strict=True
            )
        ]
    )


def _batch_norm_layouts(op: nn.BatchNormOp, target: Target) -> Layouts:
    return (
        (target.activation_layout,) + (target.channel_vector_layout,) * 4,
        (target.activation_layout,),
    )


def batch_norm_nchwc(op: nn.BatchNormOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """x * factor + (bias - mean * factor) with factor = scale / sqrt(var + eps), per lane.
    Padded parameters are zero, so padded lanes get 0 * factor + (0 - 0 * factor); factor is
    0 / sqrt(eps) = 0 there, except with eps = 0 (0 / 0 = NaN), hence the factor's padding
    lanes are re-zeroed."""
    _check_blocked(op)
    factor, shift = _batch_norm_factors(op, inputs)
    return inputs[0] * factor + shift


def _batch_norm_factors(
    op: nn.BatchNormOp, inputs: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """factor and shift, shaped [Cb, 1, 1, b] to broadcast over NCHW{b}c."""
    x, scale, bias, mean, var = inputs
    vector_spec = _spec(op.scale)
    eps = x.dtype.type(op.epsilon.value.data)
    factor = scale / np.sqrt(var + eps)
    if vector_spec is not None:
        factor = vector_spec.zero_padding(factor, shape_of(op.scale))
    shift = bias - mean * factor
    return factor[:, None, None, :], shift[:, None, None, :]


# ------------------------------------------------------------------------ pooling
def _nhw_axes(spec: LayoutSpec | None) -> tuple[int, int, int]:
    """Physical positions of the N, H and W axes (NCHW for a plain tensor)."""
    if spec is None:
        return 0, 2, 3
    return spec.dims.index("N"), spec.dims.index("H"), spec.dims.index("W")


def _pool_layout(op: Operation, spec: LayoutSpec) -> str | None:
    """Pooling windows slide over the physical H and W axes, so N, H and W must be whole
    axes of a rank-4 layout; C may be blocked and the axes may come in any order."""
    if set(spec.axes) != set("NCHW"):
        return f"layout '{spec.text}' is not a layout of N, C, H and W"
    blocked = [axis for axis in "NHW" if spec.blocks_of(axis)]
    if blocked:
        return f"layout '{spec.text}' blocks axis {blocked[0]}; pooling needs whole N, H and W"
    return None


def _pool_accepts(op: Operation, target: Target, padding: bool) -> str | None:
    return _pool_rank_reason(op)


def _pool_rank_reason(op: Operation) -> str | None:
    """Rank-4 dense inputs only."""
    if (reason := _sparse_operand(op)) is not None:
        return reason
    rank = len(shape_of(op.operands[0]))
    return None if rank == 4 else f"rank-{rank} input; the kernel needs N, C, H, W"


def max_pool2d_any(op: nn.MaxPool2dOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Spatial padding is -inf, so it never wins. A window that sees only padding (possible
    with dilation) yields -inf, also on channel padding lanes: those are re-zeroed."""
    windows = _max_pool_windows(op, inputs[0])
    return _rezero(op, _fold_taps(windows, np.maximum, np.empty(windows.shape[:-2], windows.dtype)))


def _fold_taps(windows: np.ndarray, combine: np.ufunc, out: np.ndarray) -> np.ndarray:
    """`combine` folded over the windows' last two (tap) axes into `out`, one whole-tensor
    op a tap: 3-7x faster than numpy's reduction over those innermost, strided axes (0.6
    against 3.3 ms for ResNet-50's max pooling on 16-channel blocks). A sum starts from +0,
    as numpy's do: taps that are all -0 sum to +0."""
    if combine is np.add:
        np.add(windows[..., 0, 0], 0.0, out=out)
    else:
        np.copyto(out, windows[..., 0, 0])
    for i in range(windows.shape[-2]):
        for j in range(windows.shape[-1]):
            if i or j:
                combine(out, windows[..., i, j], out=out)
    return out


def _max_pool_windows(op: nn.MaxPool2dOp, x: np.ndarray) -> np.ndarray:
    _, h, w = _nhw_axes(_spec(op.input))
    return _windows(
        x,
        (h, w),
        ints(op.kernel),
        ints(op.strides),
        ints(op.pads),
        ints(op.dilations),
        shape_of(op.output)[2:],
        -np.inf,
    )


def _window_counts(
    size: int,
    out: int,
    kernel: int,
    stride: int,
    begin: int,
    end: int,
    dilation: int,
    include_pad: bool,
) -> np.ndarray:
    """How many positions of each of the `out` windows along one axis count in the divisor:
    input positions, plus the explicit pads with count_include_pad (never ceil_mode's
    overhang past them)."""
    total = begin + size + _padded_end(size, begin, out, kernel, stride, dilation)
    counted = np.zeros(total)
    if include_pad:
        counted[: begin + size + end] = 1
    else:
        counted[begin : begin + size] = 1
    windows = sliding_window_view(counted, (kernel - 1) * dilation + 1)
    return windows[: (out - 1) * stride + 1 : stride, ::dilation].sum(axis=-1)


def avg_pool2d_any(op: nn.AvgPool2dOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Window sums over the zero-padded input divided by the number of positions that count,
    as in ONNX (count_include_pad, ceil_mode). Counts factor into height x width counts.
    Channel padding lanes sum to 0; a window with no counted position divides 0 by 0,
    so they are re-zeroed."""
    windows = _avg_pool_windows(op, inputs[0])
    out = np.empty(windows.shape[:-2], windows.dtype)
    _average(op, inputs[0], windows, out)
    return _rezero(op, out)


def _avg_pool_windows(op: nn.AvgPool2dOp, x: np.ndarray) -> np.ndarray:
    _, h, w = _nhw_axes(_spec(op.input))
    return _windows(
        x,
        (h, w),
        ints(op.kernel),
        ints(op.strides),
        ints(op.pads),
        ints(op.dilations),
        shape_of(op.output)[2:],
        0.0,
    )


def _avg_pool_divisor(op: nn.AvgPool2dOp, x: np.ndarray) -> np.ndarray:
    """The divisor of each window, shaped to broadcast over the result."""
    _, h, w = _nhw_axes(_spec(op.input))
    kernel, strides, pads, dilations = (
        ints(op.kernel),
        ints(op.strides),
        ints(op.pads),
        ints(op.dilations),
    )
    out_hw = shape_of(op.output)[2:]
    counts = [
        _window_counts(
            x.shape[axis],
            out_hw[a],
            kernel[a],
            strides[a],
            pads[a],
            pads[a + 2],
            dilations[a],
            op.count_include_pad is not None,
        )
        for a, axis in enumerate((h, w))
    ]
    divisor_shape = [1] * x.ndim
    divisor_shape[h], divisor_shape[w] = out_hw
    divisor = np.multiply.outer(*counts).astype(x.dtype)
    if h > w:
        divisor = divisor.T
    return divisor.reshape(divisor_shape)


def global_avg_pool_any(op: nn.GlobalAvgPoolOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Mean over the physical H and W axes, accumulated in float64. Channel padding lanes
    average zeros, so they stay zero."""
    x = inputs[0]
    _, h, w = _nhw_axes(_spec(op.input))
    return x.mean(axis=(h, w), keepdims=True, dtype=np.float64).astype(x.dtype)


# ------------------------------------------------------------------------- concat
def _concat_accepts(op: nn.ConcatOp, target: Target, padding: bool) -> str | None:
    """Rank 4, along the channel axis, each input's channels a multiple of the block (the
    channel blocks are then simply concatenated)."""
    rank = len(shape_of(op.output))
    if rank != 4:
        return f"rank-{rank} tensors; the blocked kernel needs NCHW"
    if op.normalized_axis != 1:
        return f"concatenation along axis {op.normalized_axis}, not the channel axis 1"
    for index, value in enumerate(op.inputs):
        channels = shape_of(value)[1]
        if channels % target.block:
            return (
                f"input {index} has {channels} channels, not a multiple of the block {target.block}"
            )
    return None


def _concat_types_reason(op: nn.ConcatOp) -> str | None:
    """Why concat_nchwc cannot join `op`'s inputs as typed (None when it can): each input in
    the result's NCHW{b}c, with channels that fill whole blocks (a padded block would land
    inside the result)."""
    spec = _blocked_spec(op.output)
    if spec is None or op.normalized_axis != 1:
        return (
            f"result of type {op.output.type} is not channel-blocked NCHW{{b}}c joined "
            "along channels; run insert-layouts before calling a blocked kernel"
        )
    b = spec.block_product("C")
    for index, value in enumerate(op.inputs):
        if _spec(value) != spec or shape_of(value)[1] % b:
            return (
                f"input {index} of type {value.type} is not {shape_of(value)[1]} channels "
                f"in whole blocks of the result's layout {spec.text}"
            )
    return None


def _concat_layouts(op: nn.ConcatOp, target: Target) -> Layouts:
    return (target.activation_layout,) * len(op.inputs), (target.activation_layout,)


def concat_nchwc(op: nn.ConcatOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Whole channel blocks of NCHW{b}c inputs, one after the other."""
    _check_blocked(op)
    return np.concatenate(inputs, axis=1)


# ------------------------------------------------------------------------ prepared
# `Kernel.prepare` for the kernels above whose math numpy can write into a destination
# (ufuncs' `out=`): the very bits of the unprepared kernel (the same numpy
# operations in the same order, except for relu and clip, see `_bounded`), without allocating
# the result and copying it. The destination may be a strided view (halo interior, concat
# slot) and, for in-place kernels, the memory of operand 0: each computation reads its inputs
# only before or in its first numpy call (numpy makes one call safe for any overlap), and
# afterwards reads only `out` (and temporaries). tests/test_prepared_kernels.py checks this.
Into = Callable[[Sequence[np.ndarray], np.ndarray], None]


@functools.lru_cache(maxsize=256)
def _mask(layout: str, shape: tuple[int, ...]) -> np.ndarray:
    mask = LayoutSpec.parse(layout).padding_mask(shape)
    mask.flags.writeable = False
    return mask


def _padding_mask(op: Operation) -> np.ndarray | None:
    """The padding lanes `_rezero` zeroes (None when there are none), computed once per
    layout and shape."""
    spec, shape = _spec(op.results[0]), tuple(shape_of(op.results[0]))
    return None if spec is None or not spec.padding_elements(shape) else _mask(spec.text, shape)


def _ufunc(function: np.ufunc) -> Callable[[Operation], Into]:
    def into(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        function(*inputs, out=out)

    return lambda op: into


def _negative_into(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    """-x as x * -1 (the same value, signed zeros included): numpy 2.4's np.negative reads
    the wrong elements when both operands are strided alike at 16 bytes (every 4th float32,
    a halo's interior column), as `tests/fuzz_regressions/seed29-1185.mlir` found."""
    np.multiply(inputs[0], out.dtype.type(-1), out=out)


def _bounded(low: float | None, high: float | None) -> Into:
    """relu and clip as the reference computes them, max(x, low) then min(., high): NaN
    propagates, and a zero equal to a zero bound becomes the bound (numpy's maximum and
    minimum return their second operand on ties). np.clip computes the same in one pass, 2-3x
    faster than maximum with a scalar (which has no SIMD loop), except that on a tie x keeps
    its own zero: adding +0.0 then turns -0.0 into a +0.0 bound. A NaN or -0.0 bound takes
    maximum and minimum."""
    bounds = [b for b in (low, high) if b is not None]
    if any(math.isnan(b) or math.copysign(1.0, b) < 0 and b == 0 for b in bounds):

        def exact(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
            x = inputs[0]
            if low is not None:
                x = np.maximum(x, out.dtype.type(low), out=out)
            if high is not None:
                x = np.minimum(x, out.dtype.type(high), out=out)
            if x is not out:
                np.copyto(out, x)

        return exact
    signed_zero = 0.0 in bounds
    low, high = -math.inf if low is None else low, math.inf if high is None else high

    def into(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        np.clip(inputs[0], out.dtype.type(low), out.dtype.type(high), out=out)
        if signed_zero:
            np.add(out, out.dtype.type(0), out=out)

    return into


def _clip_into(op: nn.ClipOp) -> Into:
    return _bounded(
        None if op.min is None else op.min.value.data, None if op.max is None else op.max.value.data
    )


def _leaky_relu_into(op: nn.LeakyReluOp) -> Into:
    """x, then alpha * x where x < 0 (x >= 0 and NaN keep x, as in the reference)."""
    alpha = op.alpha.value.data

    def into(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        np.copyto(out, inputs[0])
        np.multiply(out.dtype.type(alpha), out, out=out, where=np.less(out, 0))

    return into


def _sigmoid_into(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    """e = exp(-|x|); e / (1 + e), then 1 / (1 + e) where x >= 0 (taken before `out`, maybe
    x's memory, is written)."""
    x = inputs[0]
    positive = np.greater_equal(x, 0)
    _negative_into([np.abs(x, out=out)], out)
    np.exp(out, out=out)
    denominator = np.add(1, out)
    np.divide(out, denominator, out=out)
    np.divide(1, denominator, out=out, where=positive)


def _sum_into(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    """((x0 + x1) + x2) + ...; an operand after x1 that `out` overlaps would be overwritten
    before it is read, so then the sum is computed aside."""
    if any(np.may_share_memory(x, out) for x in inputs[2:]):
        np.copyto(out, functools.reduce(np.add, inputs[1:], inputs[0]))
        return
    total = inputs[0]
    for x in inputs[1:]:
        total = np.add(total, x, out=out)
    if total is not out:
        np.copyto(out, total)


_INTO: dict[type[Operation], Callable[[Operation], Into]] = {
    nn.ReluOp: lambda op: _bounded(0.0, None),
    nn.ClipOp: _clip_into,
    nn.LeakyReluOp: _leaky_relu_into,
    nn.SigmoidOp: lambda op: _sigmoid_into,
    nn.TanhOp: _ufunc(np.tanh),
    nn.ExpOp: _ufunc(np.exp),
    nn.NegOp: lambda op: _negative_into,
    nn.AbsOp: _ufunc(np.abs),
    nn.SqrtOp: _ufunc(np.sqrt),
    nn.AddOp: _ufunc(np.add),
    nn.SubOp: _ufunc(np.subtract),
    nn.MulOp: _ufunc(np.multiply),
    nn.DivOp: _ufunc(np.divide),
    nn.SumOp: lambda op: _sum_into,
}


def prepare_elementwise(op: Operation) -> BoundKernel:
    """An element-wise `*_any` kernel computing into `out`, then re-zeroing padding lanes
    unless the math is zero-preserving. Operands of another shape or dtype than `out` take
    the unprepared kernel."""
    into = _INTO[type(op)](op)
    mask = None if _zero_preserving(op) else _padding_mask(op)

    def bound(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        if any(x.shape != out.shape or x.dtype != out.dtype for x in inputs):
            out[...] = elementwise_any(op, inputs)
            return
        into(inputs, out)
        if mask is not None:
            np.copyto(out, 0, where=mask)

    return bound


def _prepared(
    compute: Callable[[Operation, Sequence[np.ndarray], np.ndarray], None],
    impl: Callable[[Operation, Sequence[np.ndarray]], np.ndarray],
    rezero: bool = True,
) -> Callable[[Operation], BoundKernel]:
    """`prepare` for a kernel whose `compute(op, inputs, out)` writes its result into `out`,
    followed by `_rezero`'s re-zeroing; inputs of another dtype than `out` take `impl`."""

    def prepare(op: Operation) -> BoundKernel:
        mask = _padding_mask(op) if rezero else None

        def bound(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
            if any(x.dtype != out.dtype for x in inputs):
                out[...] = impl(op, inputs)
                return
            compute(op, inputs, out)
            if mask is not None:
                np.copyto(out, 0, where=mask)

        return bound

    return prepare


def _max_pool_into(op: nn.MaxPool2dOp, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    _fold_taps(_max_pool_windows(op, inputs[0]), np.maximum, out)


def _avg_pool_into(op: nn.AvgPool2dOp, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    _average(op, inputs[0], _avg_pool_windows(op, inputs[0]), out)


def _average(op: nn.AvgPool2dOp, x: np.ndarray, windows: np.ndarray, out: np.ndarray) -> None:
    _fold_taps(windows, np.add, out)
    with np.errstate(invalid="ignore", divide="ignore"):
        np.divide(out, _avg_pool_divisor(op, x), out=out)


def _batch_norm_into(op: nn.BatchNormOp, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    _check_blocked(op)
    factor, shift = _batch_norm_factors(op, inputs)  # before `out`, maybe x, is written
    np.add(np.multiply(inputs[0], factor, out=out), shift, out=out)


def _conv_into(op: nn.Conv2dOp, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    np.copyto(out, _conv_gemm(op, inputs))
    if len(inputs) > 2:
        np.add(out, inputs[2][:, None, None, :], out=out)


def _concat_into(op: nn.ConcatOp, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
    _check_blocked(op)
    np.concatenate(inputs, axis=1, out=out)  # an input already in its slot is not copied


# ----------------------------------------------------------------------- registry
def kernels() -> list[Kernel]:
    """The blocked family's descriptors. Depthwise convolutions (a groups = 1 convolution
    of one channel among them) go to the depthwise kernel, all others to conv2d_nchwc."""
    result = [
        Kernel(
            "conv2d_nchwc",
            nn.Conv2dOp,
            "blocked",
            conv2d_nchwc,
            applies=lambda op: not _is_depthwise(op),
            accepts=_conv_accepts,
            layouts=_conv_layouts,
            accepts_types=_conv_types_reason,
            prepare=_prepared(_conv_into, conv2d_nchwc),
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
            prepare=_prepared(_dwconv_into, dwconv2d_nchwc, rezero=False),
        ),
        Kernel(
            "batch_norm_nchwc",
            nn.BatchNormOp,
            "blocked",
            batch_norm_nchwc,
            accepts=_batch_norm_accepts,
            layouts=_batch_norm_layouts,
            in_place=0,
            accepts_types=_batch_norm_types_reason,
            prepare=_prepared(_batch_norm_into, batch_norm_nchwc, rezero=False),
        ),
        Kernel(
            "concat_nchwc",
            nn.ConcatOp,
            "blocked",
            concat_nchwc,
            accepts=_concat_accepts,
            layouts=_concat_layouts,
            accepts_types=_concat_types_reason,
            prepare=_prepared(_concat_into, concat_nchwc, rezero=False),
        ),
    ]
    for op_type, impl, into in (
        (nn.MaxPool2dOp, max_pool2d_any, _max_pool_into),
        (nn.AvgPool2dOp, avg_pool2d_any, _avg_pool_into),
        (nn.GlobalAvgPoolOp, global_avg_pool_any, None),
    ):
        result.append(
            Kernel(
                impl.__name__,
                op_type,
                "blocked",
                impl,
                accepts=_pool_accepts,
                layouts=_any_layouts,
                accepts_layout=_pool_layout,
                accepts_types=functools.partial(
                    _any_types_reason, shapes=_pool_rank_reason, check=_pool_layout
                ),
                prepare=None if into is None else _prepared(into, impl),
            )
        )
    for op_type in (*_UNARY, *_NARY):
        name = op_type.name.removeprefix("nn.") + "_any"
        nary = op_type in _NARY
        result.append(
            Kernel(
                name,
                op_type,
                "blocked",
                elementwise_any,
                layouts=_any_layouts,
                accepts_layout=broadcast_layout if nary else _any_dense_layout,
                # The layout rules decide what these compute right.
                accepts_types=functools.partial(
                    _any_types_reason,
                    shapes=broadcast_reason if nary else _sparse_operand,
                    check=broadcast_layout if nary else _any_dense_layout,
                ),
                in_place=0,
                in_place_of=full_operand if nary else None,
                prepare=prepare_elementwise,
                accepts=broadcasts if nary else _dense_operands,
            )
        )
    return result
