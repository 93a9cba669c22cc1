"""The data of a memory plan: bare live intervals and their placement (what the planning core
of `plan-memory` works on), and the plan of one function with its figures, which
`plan-memory` makes and the memory report (`transforms/memory_report.py`) reads. A module of
its own, so that the report need not import the pass that prints it.
"""

from __future__ import annotations

from dataclasses import dataclass

from nnlayout.dialects.plan import (
    COMPENSATION_BYTES,
    CONSTANT_BYTES,
    PACKED_BYTES,
    PACKED_PLAIN_BYTES,
    RELEASED_BYTES,
)


@dataclass(frozen=True)
class Interval:
    """A buffer of `size` bytes, live from step `start` to step `end`, both included."""

    start: int
    end: int
    size: int

    def overlaps(self, other: Interval) -> bool:
        return self.start <= other.end and other.start <= self.end


@dataclass(frozen=True)
class Placement:
    """Byte offsets of the intervals (in their order) from the best heuristic, and the arena
    size each heuristic needed."""

    offsets: tuple[int, ...]
    arena_bytes: int
    heuristic: str
    arena_by_heuristic: dict[str, int]


@dataclass(frozen=True)
class PlannedBuffer:
    """One arena buffer of a plan, for reports: its name, interval, offset, the first buffer
    of its in-place chain (itself if none), the buffer whose memory it overwrites, if any, its
    bytes of channel padding and halo (both), and its halo bytes alone."""

    name: str
    interval: Interval
    offset: int
    chain: str
    overwrites: str | None
    padding: int
    halo: int = 0


@dataclass(frozen=True)
class ConstantBytes:
    """`total`: what the loaded program holds of its constants (`transforms/constant_bytes.py`):
    the plain arrays something still reads, the copies kernels keep, and the `packed` ones
    in a kernel's format (`packed_bytes`, `compensation` bytes of compensation among them),
    of which `packed_plain` bytes are also held plain (read on every run). `released`: the
    plain arrays freed at load, where only kernels that pack or copy them read them (not in
    `total`)."""

    total: int = 0
    packed: int = 0
    packed_bytes: int = 0
    packed_plain: int = 0
    compensation: int = 0
    released: int = 0

    def attributes(self) -> dict[str, int]:
        return {
            CONSTANT_BYTES: self.total,
            PACKED_BYTES: self.packed_bytes,
            PACKED_PLAIN_BYTES: self.packed_plain,
            COMPENSATION_BYTES: self.compensation,
            RELEASED_BYTES: self.released,
        }


@dataclass(frozen=True)
class FunctionPlan:
    """The memory plan of one function and its figures (see `transforms/plan_memory.py`'s
    module doc)."""

    function: str
    buffers: tuple[PlannedBuffer, ...]
    placement: Placement
    lower_bound_bytes: int
    peak_step: int
    unplanned_bytes: int
    padding_bytes: int
    halo_bytes: int
    steps: int
    constants: ConstantBytes = ConstantBytes()

    @property
    def arena_bytes(self) -> int:
        return self.placement.arena_bytes
