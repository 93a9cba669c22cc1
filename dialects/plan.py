"""The attributes `plan-memory` writes on each function it plans: the arena's size, its lower
bound, and the bytes left unplanned, spent on padding and on halos; and, outside the arena,
the bytes of the constants the loaded program keeps (a packed one packed, and plain too
where something still reads its plain array) and of the plain arrays it frees at load."""

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
