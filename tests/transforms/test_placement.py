"""The planning core's size classes (transforms/placement.py): near-equal buffers take each
other's places where best fit alone stacks one more on top, and a plan is never made worse."""

from __future__ import annotations

import random

import pytest

from nnlayout.transforms import placement
from nnlayout.transforms.memory_plan import Interval
from nnlayout.transforms.placement import (
    CLASS_NAME,
    HEURISTICS,
    SEARCH_NAME,
    peak,
    plan_offsets,
    size_classes,
)

# Six of MViT-v2-S's attention maps (steps 190-232 of its plan, sizes 78,726,144, 78,675,968
# and 78,738,696 bytes, scaled): at most two live at once.
NEAR_EQUAL = [
    Interval(0, 3, 99984),
    Interval(2, 4, 99920),
    Interval(4, 5, 99984),
    Interval(5, 6, 99984),
    Interval(6, 7, 99984),
    Interval(7, 8, 100000),
]


def test_size_classes_raise_near_equal_sizes_to_the_largest() -> None:
    classed = size_classes(NEAR_EQUAL + [Interval(0, 1, 99000), Interval(0, 1, 0)])
    assert [i.size for i in classed] == [100000] * 6 + [99000, 0]
    assert [(i.start, i.end) for i in classed[:6]] == [(i.start, i.end) for i in NEAR_EQUAL]


def test_near_equal_buffers_take_each_others_places(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without moves left for the search (a large program's budget), every ordering stacks a
    third buffer: the 100,000-byte one does not fit the 99,984 bytes its predecessor leaves.
    Planned at one size they alternate between two places, within 1/1024 of the bound."""
    monkeypatch.setattr(placement, "SEARCH_MOVES", 0)
    plan = plan_offsets(NEAR_EQUAL)
    bound = peak(NEAR_EQUAL)[0]
    assert bound == 199984
    assert min(plan.arena_by_heuristic[name] for name in HEURISTICS) > 1.49 * bound
    assert (plan.arena_bytes, plan.heuristic) == (200000, CLASS_NAME)
    assert plan.arena_by_heuristic[CLASS_NAME] == 200000
    assert _overlaps(NEAR_EQUAL, plan.offsets) == []


def test_a_plan_at_the_bound_does_not_try_size_classes() -> None:
    """The search reaches the bound here (its moves are not limited): the exact plan wins and
    the class plan, which could only waste bytes, is not made."""
    plan = plan_offsets(NEAR_EQUAL)
    assert plan.arena_bytes == peak(NEAR_EQUAL)[0]
    assert plan.heuristic.startswith(SEARCH_NAME)
    assert CLASS_NAME not in plan.arena_by_heuristic


def _chain(seed: int) -> list[Interval]:
    """A chain of near-equal buffers, each starting where the last ends or one step after,
    some living longer (the shape of NEAR_EQUAL)."""
    rng = random.Random(seed)
    intervals, step = [], 0
    for _ in range(rng.randrange(4, 12)):
        length = rng.choice([1, 1, 1, 2, 3])
        intervals.append(Interval(step, step + length, rng.choice([100000, 99984, 99920])))
        step += length if rng.random() < 0.8 else length - 1
    return intervals


@pytest.mark.parametrize("moves", [0, 3])
def test_size_classes_never_overlap_nor_make_a_plan_worse(moves: int) -> None:
    """On 300 seeded chains, with few moves: the plan is at most the one made without size
    classes, its buffers at their real sizes never overlap, and the class plan wins some."""
    wins = 0
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(placement, "SEARCH_MOVES", moves)
        for seed in range(300):
            intervals = _chain(seed)
            plan = plan_offsets(intervals, 8)
            with pytest.MonkeyPatch.context() as exact_only:
                exact_only.setattr(placement, "size_classes", list)
                exact = plan_offsets(intervals, 8)
            assert plan.arena_bytes <= exact.arena_bytes, seed
            assert all(offset % 8 == 0 for offset in plan.offsets)
            assert _overlaps(intervals, plan.offsets) == [], seed
            wins += plan.heuristic == CLASS_NAME
    assert wins >= 5


def _overlaps(intervals: list[Interval], offsets: tuple[int, ...]) -> list[tuple[int, int]]:
    return [
        (a, b)
        for a in range(len(intervals))
        for b in range(a)
        if intervals[a].overlaps(intervals[b])
        and offsets[a] < offsets[b] + intervals[b].size
        and offsets[b] < offsets[a] + intervals[a].size
    ]
