"""`nnlayout.packed`: a constant's bytes as the kernel that reads it stores them.

A kernel may keep a constant operand in a format of its own that no `#layout.layout` names:
oneDNN's int8 convolution packs its s8 weights into a VNNI/AMX blocking and appends the
compensation its attributes need (for an s8 source, 128 times the sum of the weights per
output channel; for a source zero point, the sum of the weights per output channel). Such
a constant keeps its logical type (the ops reading it verify as before) and says how many
bytes it takes once packed, `fold-constants` having asked the kernel:

    %w = nn.constant external "conv1.weight" : tensor<64x3x7x7xi8>
           {nnlayout.packed = {kernel = "qconv2d_onednn", bytes = 19200 : i64,
                               compensation = 768 : i64}}

`bytes` is the packed size, compensation included (oneDNN's `dnnl_memory_desc_get_size`),
`compensation` the part of it past the (padded) weights. `plan-memory` counts constants at
these sizes; the kernel, when it is bound, refuses a constant whose claim is not the size
of the format it packs into (a hand-edited or stale IR), with the constant's location.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, StringAttr, i64
from xdsl.ir import BlockArgument, Operation, SSAValue

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects.compute import operands_outside

PACKED_ATTR = "nnlayout.packed"
_KEYS = ("kernel", "bytes", "compensation")


@dataclass(frozen=True)
class Packed:
    """A constant packed by `kernel` into `bytes`, `compensation` of them past its values."""

    kernel: str
    bytes: int
    compensation: int = 0

    def attribute(self) -> DictionaryAttr:
        return DictionaryAttr(
            {
                "kernel": StringAttr(self.kernel),
                "bytes": IntegerAttr(self.bytes, i64),
                "compensation": IntegerAttr(self.compensation, i64),
            }
        )


def packed_of(op: Operation) -> Packed | None:
    """What `op` (a constant) says of its packing (None: nothing, it is stored plain); a
    malformed claim is an error located at `op`."""
    attribute = op.attributes.get(PACKED_ATTR)
    if attribute is None:
        return None
    if not isinstance(attribute, DictionaryAttr) or set(attribute.data) != set(_KEYS):
        raise DiagnosticError(
            op, f"'{PACKED_ATTR}' must be {{kernel = \"...\", bytes = N, compensation = N}}"
        )
    kernel, size, compensation = (attribute.data[key] for key in _KEYS)
    if not (
        isinstance(kernel, StringAttr)
        and isinstance(size, IntegerAttr)
        and isinstance(compensation, IntegerAttr)
        and 0 <= compensation.value.data <= size.value.data
    ):
        raise DiagnosticError(
            op,
            f"'{PACKED_ATTR}': kernel is a string, bytes and compensation integers with "
            "0 <= compensation <= bytes",
        )
    return Packed(kernel.data, size.value.data, compensation.value.data)


def defining_op(value: SSAValue) -> Operation | None:
    """The op defining `value`, seen through an `nn.compute`'s body: a block argument of its
    body stands for what the op there reads outside it (`operands_outside`)."""
    if isinstance(value, BlockArgument):
        found = (operands_outside(use.operation) for use in value.uses)
        outside = next((pair[1][value] for pair in found if pair is not None), None)
        if outside is None:
            return None
        value = outside
    return value.owner if isinstance(value.owner, Operation) else None
