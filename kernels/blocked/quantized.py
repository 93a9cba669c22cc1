"""`nn.qlookup` (fold-qdq's table of 256 entries for an activation between a dequantize and a
quantize) in whatever layout its input has (`"*"`): each byte's entry, numpy's `take` into the
destination. Bound, it takes two bytes at a time from a table of the 65,536 pairs (128 KiB,
built once per table and shared), which halves numpy's per-element cost (`take` converts each
index to an intp), one byte at a time where the data is not contiguous or of an odd size. A
padding lane gets y's zero point, the quantized 0, not the table's image of x's
zero point (sigmoid's or hardsigmoid's 0.5)."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.kernels.blocked.common import (
    any_dense_layout,
    any_layouts,
    any_types_reason,
    dense_operands,
    result_padding_mask,
    sparse_operand,
)
from nnlayout.kernels.registry import BindingSession, BoundKernel, Kernel

PAIR_TABLES = 256  # pair tables kept (128 KiB each)


def _byte_table(op: nn.QLookupOp) -> np.ndarray:
    """The table indexed by the raw byte: i8's -128 .. 127 are the bytes 128 .. 255, 0 .. 127."""
    table = op.values()
    return np.roll(table, 128) if table.dtype == np.int8 else table


def _zero_point(op: nn.QLookupOp) -> int:
    return int(op.qparams("y").zero_point)


@functools.lru_cache(maxsize=PAIR_TABLES)
def _pair_table(table: bytes) -> np.ndarray:
    """The table of two bytes at a time for the byte table `table`, indexed by them read as
    one u16: built alike for either byte order, each entry lands where its byte came from.
    Built once per table and shared, read-only, by the ops with that table (EfficientNet-B0
    has 130 lookups of 16 tables)."""
    pairs, byte = np.arange(65536), np.frombuffer(table, np.uint8).astype(np.uint16)
    result = byte[pairs & 255] | byte[pairs >> 8] << 8
    result.flags.writeable = False
    return result


def qlookup_any(op: nn.QLookupOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    out = _byte_table(op)[inputs[0].view(np.uint8)]
    mask = result_padding_mask(op)
    if mask is not None:
        np.copyto(out, _zero_point(op), where=mask)
    return out


def prepare_qlookup(op: Operation, session: BindingSession | None) -> BoundKernel:
    assert isinstance(op, nn.QLookupOp)
    table, mask, zero_point = _byte_table(op), result_padding_mask(op), _zero_point(op)
    pairs = _pair_table(table.tobytes())

    def bound(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        x = inputs[0].view(np.uint8)
        if x.flags.c_contiguous and out.flags.c_contiguous and x.size % 2 == 0:
            index, into = x.reshape(-1).view(np.uint16), out.reshape(-1).view(np.uint16)
            np.take(pairs, index, out=into, mode="clip")  # all of u16 is in range
        else:
            np.take(table, x, out=out, mode="clip")  # bytes: all in range
        if mask is not None:
            np.copyto(out, zero_point, where=mask)

    return bound


KERNELS: tuple[Kernel, ...] = (
    Kernel(
        "qlookup_any",
        nn.QLookupOp,
        "blocked",
        qlookup_any,  # type: ignore[arg-type]
        layouts=any_layouts,
        accepts_layout=any_dense_layout,
        accepts_types=functools.partial(
            any_types_reason, shapes=sparse_operand, check=any_dense_layout
        ),
        accepts=dense_operands,
        in_place=0,
        prepare=prepare_qlookup,
        integer_data=True,
    ),
)
