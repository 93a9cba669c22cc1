"""Weights reordered by oneDNN's reorder primitive into the format a convolution, a
transposed convolution or an inner product (a fully connected layer) primitive runs on,
where that is not the format the op's operand holds them in.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import MemoryDesc
from nnlayout.kernels.onednn.common import format_of, weights_md
from nnlayout.kernels.onednn.convolution import conv_geometry
from nnlayout.kernels.onednn.deconvolution import deconv_geometry
from nnlayout.kernels.onednn.matmul import fc_given_weights, is_fully_connected
from nnlayout.kernels.onednn.primitives import NUMPY_TYPES, Compiled


def weights_repacker(
    op: Operation, compiled: Compiled
) -> Callable[[np.ndarray], np.ndarray] | None:
    """How `op`'s weights, as its operand holds them, become the ones `compiled` runs on;
    None where they already are. A transposed convolution's are ours, (i, o, h, w), packed
    by oneDNN's choice; a convolution's are in the format its type records, which oneDNN
    may have chosen anew at load (`conv_variants`)."""
    if isinstance(op, nn.ConvTranspose2dOp):
        g = deconv_geometry(op)
        given = MemoryDesc.with_tag(g.weights, g.plain_weights)
    elif isinstance(op, nn.Conv2dOp | nn.FusedConv2dOp):
        g = conv_geometry(op)
        weights = format_of(op.weight, g.weights_role, g.weights)
        given = MemoryDesc.with_tag(g.weights, weights.value, g.data_type)
    elif is_fully_connected(op):
        given = fc_given_weights(op)
    else:
        return None
    wanted = weights_md(compiled)
    if given == wanted:
        return None
    reorder = Compiled(p.reorder_pd(given, wanted), (b.DNNL_ARG_SRC, b.DNNL_ARG_DST))

    dtype = NUMPY_TYPES[wanted.data_type]  # f32, or bf16 (`ConvGeometry.data_type`)

    def repack(weights: np.ndarray) -> np.ndarray:
        packed = np.empty(wanted.size // dtype.itemsize, dtype=dtype)
        reorder(
            {
                b.DNNL_ARG_SRC: np.ascontiguousarray(weights, dtype=dtype).ravel(),
                b.DNNL_ARG_DST: packed,
            },
            np.empty(reorder.scratchpad_bytes, np.uint8),
        )
        return packed

    return repack
