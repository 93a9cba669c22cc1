"""The attributes `plan-memory` writes on each function it plans: the arena's size, its lower
bound, and the bytes left unplanned, spent on padding and on halos."""

ARENA_BYTES = "nnlayout.arena_bytes"
LOWER_BOUND_BYTES = "nnlayout.lower_bound_bytes"
UNPLANNED_BYTES = "nnlayout.unplanned_bytes"
PADDING_BYTES = "nnlayout.padding_bytes"
HALO_BYTES = "nnlayout.halo_bytes"
