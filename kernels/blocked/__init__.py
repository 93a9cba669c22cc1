"""Blocked numpy kernels (family `blocked`): convolutions, batch norm and concat on
channel-blocked layouts (`NCHW{b}c` activations, `IHW{b}iO{b}o` weights, `C{b}c` vectors), and
element-wise, pooling, reduction, data-movement and table-lookup (8-bit) kernels that run on
whatever layout their operand already has (`"*"`). One module a family of ops (`convolution`,
`normalization`, `concat`, `pooling`, `reduction`, `elementwise`, `movement`, `quantized`), each
ending with its descriptors as data (`KERNELS`); what they share is in `common`, the target's
options they read (`BlockedOptions`) in `options`.

The block `b` is the target's (8 on avx2, 16 on avx512) when a kernel declares its layouts, but
an implementation never assumes it: it reads the block from the `#layout.layout` encodings that
insert-layouts put on the op's operand types. Inputs arrive as physical arrays (`LayoutSpec.pack`
order, zero padding lanes); results are returned the same way, in the operand's dtype.

Padding (invariant 2): every kernel here leaves the padding lanes of its result exactly zero,
whatever the real lanes hold (NaN, Inf). Where the math alone would not (sigmoid(0) = 0.5,
0 * Inf = NaN in a convolution's padded output channels, a window of pure padding) the kernel
re-zeroes the lanes with `LayoutSpec.zero_padding` (the element-wise kernels only where
their math maps 0 elsewhere: `elementwise._zero_preserving`).

Prepared (`Kernel.prepare`): the element-wise kernels, max and average pooling, the dense and
depthwise convolutions, batch norm and concat also come bound to their op, computing straight
into the destination buffer (possibly in place, possibly a strided view) with the same result
bits, instead of returning a new array that is then copied there.

When to block (`accepts`): channel counts that are not a multiple of the block are padded only
if padding is allowed; convolutions with fewer multiply-accumulates than the target's
`BlockedOptions.min_blocked_macs` stay plain, because the reorders around them cost more than
blocking gains. A convolution on an image of a few channels (`convolution._plain_input`) reads
it plain and writes blocks: padding 3 channels to 16 would multiply its work by 5.3.
"""

from __future__ import annotations

from nnlayout.kernels.blocked import (
    concat,
    convolution,
    elementwise,
    logical,
    movement,
    normalization,
    pooling,
    quantized,
    reduction,
)
from nnlayout.kernels.blocked.concat import concat_nchwc
from nnlayout.kernels.blocked.convolution import conv2d_nchwc, dwconv2d_nchwc
from nnlayout.kernels.blocked.elementwise import (
    broadcast_layout,
    broadcast_reason,
    broadcasts,
    elementwise_any,
    full_operand,
    prepare_elementwise,
)
from nnlayout.kernels.blocked.normalization import batch_norm_nchwc
from nnlayout.kernels.blocked.options import BlockedOptions
from nnlayout.kernels.blocked.pooling import avg_pool2d_any, global_avg_pool_any, max_pool2d_any
from nnlayout.kernels.registry import Kernel

__all__ = [
    "BlockedOptions",
    "avg_pool2d_any",
    "batch_norm_nchwc",
    "broadcast_layout",
    "broadcast_reason",
    "broadcasts",
    "concat_nchwc",
    "conv2d_nchwc",
    "dwconv2d_nchwc",
    "elementwise_any",
    "full_operand",
    "global_avg_pool_any",
    "kernels",
    "max_pool2d_any",
    "prepare_elementwise",
]


def kernels() -> list[Kernel]:
    """The blocked family's descriptors: convolutions, batch norm, concat, pooling,
    reductions, then the element-wise, data-movement and table-lookup kernels."""
    return [
        *convolution.KERNELS,
        *normalization.KERNELS,
        *concat.KERNELS,
        *pooling.KERNELS,
        *reduction.KERNELS,
        *elementwise.KERNELS,
        *logical.KERNELS,
        *movement.KERNELS,
        *quantized.KERNELS,
    ]
