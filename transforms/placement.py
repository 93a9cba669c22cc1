"""The planning core of `plan-memory` (transforms/plan_memory.py): byte offsets for bare
live intervals (start, end, size) such that no two live at one step overlap, in an arena as
small as the heuristics and a bounded local search can make it.

Several orderings feed one best-fit placement (each buffer in the smallest gap left by the
buffers already placed and live at the same time, else on top); the smallest arena wins.
Greedy by size and greedy by breadth are TFLite's arena planners (Pisarchyk & Lee, 2020),
best fit by area and by duration XLA's heap simulator orderings; greedy by size with ties
broken by last use is ours, and so is greedy by size class: buffers within `SIZE_CLASS` of a
larger one are placed as if they were as large, so that near-equal buffers (MViT's attention
maps, a few kilobytes apart) take each other's places, which best fit alone refuses and
then stacks one more on top. Where the best plan stays above the lower bound, a seeded
local search moves buffers in its order (`_searched`).
"""

from __future__ import annotations

import math
import random
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate

from nnlayout.transforms.memory_plan import Interval, Placement
from nnlayout.transforms.time_index import TimeIndex, placing_work


def align(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def peak(intervals: Sequence[Interval]) -> tuple[int, int]:
    """The most bytes live at one step, and the first step where that many are live."""
    events = sorted(
        [(i.start, i.size) for i in intervals] + [(i.end + 1, -i.size) for i in intervals]
    )
    live = best = 0
    where = min((i.start for i in intervals), default=0)
    for step, delta in events:  # at equal steps, frees (negative) sort before allocations
        live += delta
        if live > best:
            best, where = live, step
    return best, where


def _by_size(intervals: Sequence[Interval]) -> list[int]:
    return sorted(range(len(intervals)), key=lambda i: (-intervals[i].size, intervals[i].start))


def _by_size_last_use(intervals: Sequence[Interval]) -> list[int]:
    """By size, and among buffers of one size the one used last first. Another tie-break
    of the same greedy order, for graphs with many buffers of one size (DenseNet's
    bottleneck outputs)."""
    return sorted(range(len(intervals)), key=lambda i: (-intervals[i].size, -intervals[i].end))


def _by_area(intervals: Sequence[Interval]) -> list[int]:
    return sorted(
        range(len(intervals)),
        key=lambda i: (
            -intervals[i].size * (intervals[i].end - intervals[i].start + 1),
            -intervals[i].size,
        ),
    )


def _by_duration(intervals: Sequence[Interval]) -> list[int]:
    return sorted(
        range(len(intervals)),
        key=lambda i: (intervals[i].start - intervals[i].end, -intervals[i].size),
    )


def _by_breadth(intervals: Sequence[Interval]) -> list[int]:
    """Steps in decreasing order of the bytes live there; at each, its buffers by size: each
    buffer comes with the first of those steps it is live at (computed for all buffers at
    once with a range-minimum table, not by listing every step's buffers, which is
    quadratic)."""
    rank = {i: n for n, i in enumerate(_by_size(intervals))}
    steps = sorted({i.start for i in intervals})
    ranges = [(bisect_left(steps, i.start), bisect_right(steps, i.end) - 1) for i in intervals]
    live = [0] * (len(steps) + 1)
    for (low, high), interval in zip(ranges, intervals, strict=True):
        live[low] += interval.size
        live[high + 1] -= interval.size
    live = list(accumulate(live))
    by_bytes = sorted(range(len(steps)), key=lambda s: -live[s])
    first = _RangeMinimum([0] * len(steps))
    for order, step in enumerate(by_bytes):
        first.values[step] = order
    first.build()
    return sorted(range(len(intervals)), key=lambda i: (first.minimum(*ranges[i]), rank[i]))


class _RangeMinimum:
    """The minimum of `values[low..high]` in constant time, from a sparse table."""

    def __init__(self, values: list[int]) -> None:
        self.values = values
        self.table: list[list[int]] = []

    def build(self) -> None:
        self.table = [self.values]
        width = 1
        while 2 * width <= len(self.values):
            row = self.table[-1]
            self.table.append([min(a, b) for a, b in zip(row, row[width:], strict=False)])
            width *= 2

    def minimum(self, low: int, high: int) -> int:
        level = (high - low + 1).bit_length() - 1
        row = self.table[level]
        return min(row[low], row[high - (1 << level) + 1])


HEURISTICS: dict[str, Callable[[Sequence[Interval]], list[int]]] = {
    "greedy-by-size": _by_size,
    "greedy-by-size-last-use": _by_size_last_use,
    "greedy-by-breadth": _by_breadth,
    "best-fit-by-area": _by_area,
    "best-fit-by-duration": _by_duration,
}


def _best_fit(
    intervals: Sequence[Interval], order: Sequence[int], alignment: int
) -> tuple[list[int], int]:
    """Places the intervals in `order`, each in the smallest gap (between buffers already
    placed and live at the same time) that holds it, else above them all."""
    offsets = [0] * len(intervals)
    placed = TimeIndex()
    arena = 0
    for i in order:
        interval = intervals[i]
        size = align(interval.size, alignment)
        top = 0
        best_offset, best_gap = -1, math.inf
        for offset, end in sorted(placed.overlapping(interval)):
            gap = offset - top
            if size <= gap < best_gap:
                best_offset, best_gap = top, gap
            top = max(top, end)
        offset = best_offset if best_offset >= 0 else top
        offsets[i] = offset
        placed.add(interval, (offset, offset + size))
        arena = max(arena, offset + size)
    return offsets, arena


# Moves tried by the search that follows the heuristics (`_searched`): at most SEARCH_MOVES,
# fewer for large functions (each move re-places every buffer: `placing_work`, about 0.7 us
# a unit), so that one search costs at most about 1.5 s (a plan that stays above the bound
# searches twice: from the exact sizes, then from the size classes). A fixed seed keeps the
# plan the same from run to run.
SEARCH_MOVES = 2000
SEARCH_WORK = 2_000_000
SEARCH_NAME = "local-search"


def _at_top(aligned: Sequence[Interval], offsets: Sequence[int], arena: int) -> list[int]:
    """The intervals whose (aligned) bytes end at the top of the arena: the ones that make it
    as large as it is."""
    return [i for i, (a, o) in enumerate(zip(aligned, offsets, strict=True)) if o + a.size == arena]


def _moved(order: list[int], top: Sequence[int], moves: random.Random) -> list[int] | None:
    """`order` with one interval at the top of the arena moved to a random place before its
    own, where it is placed before more of the buffers that pushed it up; None when every
    interval at the top comes first already."""
    where = {interval: n for n, interval in enumerate(order)}
    movable = [where[i] for i in top if where[i] > 0]
    if not movable:
        return None
    candidate = list(order)
    old = moves.choice(movable)
    candidate.insert(moves.randrange(old), candidate.pop(old))
    return candidate


def _searched(
    intervals: Sequence[Interval], order: list[int], offsets: list[int], arena: int, alignment: int
) -> tuple[list[int], int]:
    """`offsets` and `arena`, the plan of `order`, improved by moving one interval at a time
    (at random, from a fixed seed), until no plan can be smaller (the peak of the aligned
    sizes) or the moves allowed were tried. Every other move takes an interval at the top
    of the arena to an earlier place (`_moved`), kept when the arena shrinks, or keeps its
    size with no more intervals at its top; the others move any interval anywhere, kept when
    the arena does not grow. Moves of the second kind alone left ConvNeXt-T at 1.167 of its
    bound for one seed in two (greedy-by-size puts every block's large buffer at offset 0,
    and the residual chains, overlapping from block to block, three deep above them); with
    both kinds, 40 seeds of 40 reach the bound there within 85 moves, and ResNeXt-50's
    (avx2, no padding) within 600 (docs/history-notes.md)."""
    aligned = [Interval(i.start, i.end, align(i.size, alignment)) for i in intervals]
    bound = peak(aligned)[0]
    top = _at_top(aligned, offsets, arena)
    moves = random.Random(0)
    for move in range(min(SEARCH_MOVES, SEARCH_WORK // max(1, placing_work(intervals)))):
        if arena <= bound:
            break
        candidate = _moved(order, top, moves) if move % 2 == 0 else None
        targeted = candidate is not None
        if candidate is None:
            candidate = list(order)
            candidate.insert(
                moves.randrange(len(order)), candidate.pop(moves.randrange(len(order)))
            )
        candidate_offsets, candidate_arena = _best_fit(intervals, candidate, alignment)
        candidate_top = _at_top(aligned, candidate_offsets, candidate_arena)
        if candidate_arena < arena or (
            candidate_arena == arena and (not targeted or len(candidate_top) <= len(top))
        ):
            order, offsets, arena, top = (
                candidate,
                candidate_offsets,
                candidate_arena,
                candidate_top,
            )
    return offsets, arena


# Sizes within this fraction below a larger one are planned at that size by greedy by size
# class (CLASS_NAME): a plan never wastes more than it of a buffer.
SIZE_CLASS = 1 / 1024
CLASS_NAME = "greedy-by-size-class"


def size_classes(intervals: Sequence[Interval]) -> list[Interval]:
    """`intervals` with each size raised to the largest of its class: sizes in decreasing
    order, a class begins at the first more than `SIZE_CLASS` below the size it began at."""
    largest: dict[int, int] = {}
    first = 0
    for size in sorted({i.size for i in intervals}, reverse=True):
        if first == 0 or size < first * (1 - SIZE_CLASS):
            first = size
        largest[size] = first
    return [Interval(i.start, i.end, largest[i.size]) for i in intervals]


def _extent(intervals: Sequence[Interval], offsets: Sequence[int], alignment: int) -> int:
    """The arena that `offsets` need for the (aligned) sizes of `intervals`."""
    return max(
        (o + align(i.size, alignment) for i, o in zip(intervals, offsets, strict=True)), default=0
    )


def _plan(
    intervals: Sequence[Interval],
    sized: Sequence[Interval],
    orderings: dict[str, Callable[[Sequence[Interval]], list[int]]],
    alignment: int,
    arenas: dict[str, int],
) -> tuple[list[int], int, str]:
    """The offsets, arena and name of the best of `orderings` placed at the sizes of `sized`,
    then searched; arenas are what the sizes of `intervals` take at those offsets, and each
    is recorded in `arenas`."""
    best: tuple[list[int], int, str, list[int], int] | None = None
    for name, ordering in orderings.items():
        order = ordering(sized)
        offsets, placed = _best_fit(sized, order, alignment)
        arenas[name] = arena = _extent(intervals, offsets, alignment)
        if best is None or arena < best[1]:
            best = (offsets, arena, name, order, placed)
    assert best is not None
    offsets, arena, name, order, placed = best
    searched = _searched(sized, order, offsets, placed, alignment)[0]
    searched_arena = _extent(intervals, searched, alignment)
    if searched_arena >= arena:
        return offsets, arena, name
    arenas[SEARCH_NAME] = min(searched_arena, arenas.get(SEARCH_NAME, searched_arena))
    return searched, searched_arena, f"{SEARCH_NAME} from {name}"


def plan_offsets(intervals: Sequence[Interval], alignment: int = 1) -> Placement:
    """Offsets (multiples of `alignment`) for `intervals` such that no two live at the same
    step overlap: the heuristic that needs the smallest arena, improved by a local search
    where it stays above the lower bound (`SEARCH_NAME` then names the plan). Only where
    that plan stays above the bound, greedy by size class is tried (and searched in turn)
    and kept if smaller: it can only improve a plan."""
    arenas: dict[str, int] = {}
    offsets, arena, name = _plan(intervals, intervals, HEURISTICS, alignment, arenas)
    bound = peak([Interval(i.start, i.end, align(i.size, alignment)) for i in intervals])[0]
    if arena > bound and (classed := size_classes(intervals)) != list(intervals):
        other = _plan(intervals, classed, {CLASS_NAME: _by_size}, alignment, arenas)
        if other[1] < arena:
            offsets, arena, name = other
    return Placement(tuple(offsets), arena, name, arenas)
