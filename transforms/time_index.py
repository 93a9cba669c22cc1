"""The placed buffers of `plan-memory`'s best fit (transforms/plan_memory.py, `_best_fit`),
found by the steps they are live at: a module of its own so that the pass stays readable."""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence

from nnlayout.transforms.memory_plan import Interval


class TimeIndex:
    """Placed intervals, found by the steps they are live at without looking at the others:
    those live at a step are kept in a segment tree over steps (each at the few nodes that
    cover it), those that start at a step in a list of that step. Finding the ones live
    during an interval then costs its duration and the number found, so a best fit is
    linear in the buffers for a bounded number live at once (a scan of all placed buffers
    for each made plan-memory quadratic on programs of thousands of ops)."""

    def __init__(self) -> None:
        self.size = 1
        self.nodes: dict[int, list[tuple[Interval, tuple[int, int]]]] = {}
        self.starts: dict[int, list[tuple[int, int]]] = {}

    def add(self, interval: Interval, place: tuple[int, int]) -> None:
        while self.size <= interval.end:
            self._grow()
        self.starts.setdefault(interval.start, []).append(place)
        low, high = interval.start + self.size, interval.end + self.size + 1
        while low < high:
            if low & 1:
                self.nodes.setdefault(low, []).append((interval, place))
                low += 1
            if high & 1:
                high -= 1
                self.nodes.setdefault(high, []).append((interval, place))
            low, high = low >> 1, high >> 1

    def _grow(self) -> None:
        """Doubles the steps covered: each node moves one level down the new tree."""
        nodes: dict[int, list[tuple[Interval, tuple[int, int]]]] = {}
        for node, entries in self.nodes.items():
            nodes[node + (1 << (node.bit_length() - 1))] = entries
        self.nodes, self.size = nodes, 2 * self.size

    def overlapping(self, interval: Interval) -> list[tuple[int, int]]:
        """The places of the intervals live at some step of `interval`."""
        found = []
        if interval.start < self.size:
            node = interval.start + self.size
            while node:
                found += [p for i, p in self.nodes.get(node, ()) if i.start < interval.start]
                node >>= 1
        for step in range(interval.start, interval.end + 1):
            found += self.starts.get(step, ())
        return found


def placing_work(intervals: Sequence[Interval]) -> int:
    """What placing all of `intervals` in a `TimeIndex` costs, in list entries and tree
    nodes visited (the same for every order): each interval's path up the tree and its
    duration, and once each pair of intervals live at a common step (found by the later
    one placed). A plan's search budgets its moves by it: chain-like programs have few
    such pairs, so n^2 overstated a move there by a hundredfold (MaxViT-T)."""
    if not intervals:
        return 0
    height = (max(i.end for i in intervals) + 1).bit_length() + 1
    starts = sorted(i.start for i in intervals)
    ends = sorted(i.end for i in intervals)
    # Pairs where one starts before the other and is still live at its start, then pairs
    # that start at one step.
    pairs = sum(bisect_left(starts, i.start) - bisect_left(ends, i.start) for i in intervals)
    pairs += sum(g * (g - 1) // 2 for g in Counter(i.start for i in intervals).values())
    return sum(height + i.end - i.start + 1 for i in intervals) + pairs
