"""Memory plans for people: a text summary and an SVG picture of each function's arena.

`format_report` gives the arena size against the lower bound and the unplanned sum, the
padding it holds, and the largest buffers live at the peak (what to shrink to save memory).
`plan_svg` draws each function as one panel: steps on x, arena offset on y, one rectangle per
buffer (an in-place chain in one colour), the lower bound as a dashed line. Both read a
`FunctionPlan` of `plan-memory` (`transforms/memory_plan.py`); `plan-memory{report=true
svg=FILE}` and `benchmarks/memory_report.py` call them.
"""

from __future__ import annotations

import colorsys
import zlib
from collections.abc import Sequence
from html import escape

from nnlayout.transforms.memory_plan import FunctionPlan

MIB = 1 << 20


def _mib(count: int) -> str:
    return f"{count / MIB:.2f} MiB" if count >= MIB // 8 else f"{count / 1024:.1f} KiB"


def format_report(plan: FunctionPlan, largest: int = 8) -> str:
    """A few lines on `plan`: its figures, then the `largest` buffers live at the peak."""
    ratio = plan.arena_bytes / plan.lower_bound_bytes if plan.lower_bound_bytes else 1.0
    others = ", ".join(
        f"{name} {_mib(size)}" for name, size in plan.placement.arena_by_heuristic.items()
    )
    lines = [
        f"@{plan.function}: {len(plan.buffers)} buffers over {plan.steps} steps",
        f"  arena        {_mib(plan.arena_bytes):>12}  ({plan.placement.heuristic}; {others})",
        f"  lower bound  {_mib(plan.lower_bound_bytes):>12}  (arena/bound {ratio:.3f}, "
        f"peak at step {plan.peak_step})",
        f"  unplanned    {_mib(plan.unplanned_bytes):>12}  (every buffer on its own)",
        f"  padding      {_mib(plan.padding_bytes):>12}  (channel padding "
        f"{_mib(plan.padding_bytes - plan.halo_bytes)}, halo {_mib(plan.halo_bytes)})",
    ]
    at_peak = sorted(
        (b for b in plan.buffers if b.interval.start <= plan.peak_step <= b.interval.end),
        key=lambda b: -b.interval.size,
    )
    if at_peak:
        chains = {b.chain: b.padding for b in at_peak}  # an in-place pair shares its bytes
        lines.append(
            f"  largest buffers live at the peak ({len(at_peak)} live, "
            f"{_mib(sum(chains.values()))} of padding and halo):"
        )
    for b in at_peak[:largest]:
        partner = f", in place of %{b.overwrites}" if b.overwrites else ""
        lines.append(
            f"    {_mib(b.interval.size):>12}  %{b.name}  steps "
            f"{b.interval.start}-{b.interval.end}, offset {b.offset}{partner}"
        )
    return "\n".join(lines)


def _colour(name: str) -> str:
    """A light colour picked by `name`, as #rrggbb (not every SVG renderer reads hsl())."""
    red, green, blue = colorsys.hls_to_rgb(zlib.crc32(name.encode()) % 360 / 360, 0.62, 0.55)
    return f"#{round(red * 255):02x}{round(green * 255):02x}{round(blue * 255):02x}"


_LEFT, _TOP, _BOTTOM, _GAP = 70, 40, 40, 30  # panel margins and the space between panels


def _panel(plan: FunctionPlan, top: int, plot_w: int, plot_h: int) -> list[str]:
    """The SVG elements of one plan's panel, whose plot area starts at y = `top`."""
    arena = max(plan.arena_bytes, 1)
    steps = max(plan.steps, 1)

    def x(step: float) -> float:
        return _LEFT + plot_w * step / steps

    def y(offset: float) -> float:
        return top + plot_h * (1 - offset / arena)

    out = [
        f'<text x="{_LEFT}" y="{top - 14}" font-size="13" font-weight="bold">'
        f"@{escape(plan.function)}: arena {_mib(plan.arena_bytes)}, lower bound "
        f"{_mib(plan.lower_bound_bytes)}, unplanned {_mib(plan.unplanned_bytes)}</text>",
        f'<rect x="{_LEFT}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#f6f6f6" '
        'stroke="#444"/>',
    ]
    for b in plan.buffers:
        left, right = x(b.interval.start), x(b.interval.end + 1)
        upper, lower = y(b.offset + b.interval.size), y(b.offset)
        out.append(
            f'<rect x="{left:.1f}" y="{upper:.1f}" width="{right - left:.1f}" '
            f'height="{max(lower - upper, 0.5):.1f}" '
            f'fill="{_colour(b.chain)}" stroke="#333" '
            f'stroke-width="0.4"><title>%{escape(b.name)}: {b.interval.size} bytes at '
            f"offset {b.offset}, steps {b.interval.start}-{b.interval.end}</title></rect>"
        )
    bound_y = y(plan.lower_bound_bytes)
    out.append(
        f'<line x1="{_LEFT}" x2="{_LEFT + plot_w}" y1="{bound_y:.1f}" y2="{bound_y:.1f}" '
        'stroke="red" stroke-dasharray="5,3"/>'
    )
    out.append(
        f'<text x="{_LEFT + plot_w - 4}" y="{bound_y - 3:.1f}" text-anchor="end" '
        'fill="red">lower bound</text>'
    )
    for fraction in (0.0, 0.25, 0.5, 0.75, 1.0):
        out.append(
            f'<text x="{_LEFT - 6}" y="{y(arena * fraction) + 4:.1f}" '
            f'text-anchor="end">{_mib(int(arena * fraction))}</text>'
        )
        out.append(
            f'<text x="{x(steps * fraction):.1f}" y="{top + plot_h + 14}" '
            f'text-anchor="middle">{int(steps * fraction)}</text>'
        )
    middle = top + plot_h / 2
    out.append(
        f'<text x="{_LEFT + plot_w / 2}" y="{top + plot_h + 30}" text-anchor="middle">'
        "step (ops that touch buffers)</text>"
    )
    out.append(
        f'<text x="14" y="{middle}" text-anchor="middle" '
        f'transform="rotate(-90 14 {middle})">arena offset</text>'
    )
    return out


def plan_svg(plans: Sequence[FunctionPlan], width: int = 960, height: int = 360) -> str:
    """An SVG document with one panel per plan (hand-written: rectangles and text)."""
    total = max(1, len(plans)) * (height + _GAP)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{total}" '
        'font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{total}" fill="white"/>',
    ]
    for n, plan in enumerate(plans):
        out += _panel(plan, n * (height + _GAP) + _TOP, width - _LEFT - 20, height - _TOP - _BOTTOM)
    out.append("</svg>")
    return "\n".join(out) + "\n"
