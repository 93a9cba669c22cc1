"""The attributes `plan-memory` writes on each function it plans: the arena's size, its lower
bound, and the bytes left unplanned, spent on padding and on halos; and, outside the arena,
the bytes of the constants the loaded program keeps (a packed one packed, and plain too
where something still reads its plain array) and of the plain arrays it frees at load; and
what the arena itself is."""

from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType, i8
from xdsl.ir import Operation

ARENA_BYTES = "nnlayout.arena_bytes"
LOWER_BOUND_BYTES = "nnlayout.lower_bound_bytes"
UNPLANNED_BYTES = "nnlayout.unplanned_bytes"
PADDING_BYTES = "nnlayout.padding_bytes"
HALO_BYTES = "nnlayout.halo_bytes"
# Outside the arena: the constants the loaded program keeps (transforms/constant_bytes.py).
CONSTANT_BYTES = "nnlayout.constant_bytes"
PACKED_BYTES = "nnlayout.packed_bytes"
PACKED_PLAIN_BYTES = "nnlayout.packed_plain_bytes"
COMPENSATION_BYTES = "nnlayout.compensation_bytes"
RELEASED_BYTES = "nnlayout.released_bytes"


def is_arena(op: Operation) -> bool:
    """Whether `op` is an arena: a `memref.alloc` of bytes (1-D i8) that views carve up. A
    1-D i8 buffer of quantized data (a function's rank-1 i8 result) is not one: nothing
    views it."""
    return (
        isinstance(op, memref.AllocOp)
        and isinstance(op.memref.type, MemRefType)
        and len(op.memref.type.get_shape()) == 1
        and op.memref.type.element_type == i8
        and any(isinstance(use.operation, memref.ViewOp) for use in op.memref.uses)
    )
