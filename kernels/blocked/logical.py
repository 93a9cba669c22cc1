"""`nn.compare`, `nn.logical` and `nn.where` in whatever layout operand 0 has (`"*"`), as the
element-wise kernels of `elementwise.py`: the reference math lane by lane on the physical
arrays, operands broadcasting along axes of size 1 that the layout does not block. So a
`torch.where` between NHWC or nChw16c convolutions needs no reorder to plain and back.

Padding lanes are re-zeroed after the math (a mask's zero is false): two padding zeros compare
true for eq, le and ge. A broadcast constant (the -inf of a mask fill) never reaches them:
like the element-wise kernels, these refuse an operand that broadcasts along a blocked axis,
so such an op runs where its operands are plain or channels-last."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.kernels.blocked.common import (
    result_padding_mask,
    rezero_padding,
)
from nnlayout.kernels.blocked.elementwise import any_layout_kernel, computing_into
from nnlayout.kernels.reference import PREPARED_REFERENCE_KERNELS, REFERENCE_KERNELS
from nnlayout.kernels.registry import BindingSession, BoundKernel, Kernel


def logical_any(op: Operation, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The reference math on the physical arrays (one layout), padding lanes re-zeroed."""
    return rezero_padding(op, REFERENCE_KERNELS[type(op)](op, inputs))


def prepare_logical(op: Operation, session: BindingSession | None) -> BoundKernel:
    """The reference kernel's prepared form writing into `out`, then the padding lanes
    re-zeroed; operands of another rank than `out` take `logical_any`."""
    into = PREPARED_REFERENCE_KERNELS[type(op)](op, session)
    return computing_into(op, into, result_padding_mask(op), logical_any, same_dtype=False)


KERNELS: tuple[Kernel, ...] = (
    any_layout_kernel(nn.CompareOp, logical_any, prepare_logical, True, mask_data=True),
    any_layout_kernel(nn.LogicalOp, logical_any, prepare_logical, True, mask_data=True),
    any_layout_kernel(
        nn.WhereOp,
        logical_any,
        prepare_logical,
        True,
        in_place=2,  # y: written first (the planner joins buffers of equal size only)
        mask_data=True,
    ),
)
