"""Plain row-major operands of a broadcasting binary op described to oneDNN with their
adjacent axes merged where they broadcast alike, so that oneDNN's fast (jit) binary takes a
broadcast it would otherwise leave to its reference code.

oneDNN's jit binary knows a few broadcast patterns of its second source (a scalar, per
channel, per batch and spatial point, ...), named by the axes of the descriptors it is given.
Swin's shifted-window attention adds its mask [1, 64, 1, 49, 49] to the scores
[1, 64, 3, 49, 49]: five axes, the third broadcast, which oneDNN runs only as `ref:any`.
Row-major data keeps its bytes under any merge of adjacent axes, so the same add is
[64, 3, 2401] + [64, 1, 2401] (per batch and spatial point, broadcast over the channel
axis 1), which it runs in jit code. Adjacent axes merge where each operand is either whole
or broadcast (of size 1) along both; an axis of size 1 in the result merges with any.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Shape = tuple[int, ...]


def collapsed_shapes(result: Shape, operands: Sequence[Shape]) -> tuple[Shape, list[Shape]]:
    """`result` and `operands` (each of `result`'s rank, every axis whole or 1) with adjacent
    axes merged where every operand broadcasts alike along them; at least one axis."""
    groups: list[list[int]] = []
    pattern: tuple[bool, ...] | None = None
    for axis, size in enumerate(result):
        if size == 1:  # broadcasts alike with anything: join the current group
            if groups:
                groups[-1].append(axis)
            else:
                groups.append([axis])
            continue
        whole = tuple(shape[axis] == size for shape in operands)
        if pattern is None or whole != pattern:
            if pattern is None and groups:  # leading size-1 axes join the first real group
                groups[-1].append(axis)
            else:
                groups.append([axis])
            pattern = whole
        else:
            groups[-1].append(axis)
    return (
        tuple(math.prod(result[a] for a in group) for group in groups),
        [tuple(math.prod(shape[a] for a in group) for group in groups) for shape in operands],
    )
