"""Memory plans for people: a text summary and an SVG picture of each function's arena.

`format_report` gives the arena size against the lower bound and the unplanned sum, the
padding it holds, and the largest buffers live at the peak (what to shrink to save memory).
`plan_svg` draws each function as one panel: op index on x, arena offset on y (one unit,
chosen from the arena's size, also in the panel's title), one rectangle per buffer labelled
with its name and size (inside it, else beside it, else a number listed under the plot), a
colour per in-place chain (ColorBrewer's Set3, chains that touch told apart), its channel
padding and halo as hatched bands at its top in proportion to their bytes, the lower bound as
a dashed line, and a legend. `bash scripts/plan_screenshot.sh` shows it as Chromium draws
it; tests/transforms/test_plan_picture.py reads it back. Both read a
`FunctionPlan` of `plan-memory` (`transforms/memory_plan.py`); `plan-memory{report=true
svg=FILE}` and `benchmarks/memory_report.py` call them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from nnlayout.transforms.memory_plan import FunctionPlan, PlannedBuffer

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
    constants = plan.constants
    if constants.total:
        lines.append(f"  constants    {_mib(constants.total):>12}  ({constants_held(plan)})")
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


def constants_held(plan: FunctionPlan) -> str:
    """What the loaded program holds of its constants: packed copies, plain arrays of packed
    ones still read (on every run), and the plain arrays freed at load."""
    constants, said = plan.constants, "outside the arena"
    if constants.packed:
        said += (
            f"; {constants.packed} packed by their kernels: {_mib(constants.packed_bytes)}, "
            f"compensation {_mib(constants.compensation)}"
        )
        if constants.packed_plain:
            said += f", held plain too (read on every run): {_mib(constants.packed_plain)}"
    if constants.released:
        said += f"; plain arrays freed at load: {_mib(constants.released)}"
    return said


# ------------------------------------------------------------------ the picture
# ColorBrewer's qualitative "Set3" without its grey (which would read as padding): light
# colours told apart by hue, black text legible on each; chains that touch get different ones.
PALETTE = (
    "#8dd3c7",
    "#ffffb3",
    "#bebada",
    "#fb8072",
    "#80b1d3",
    "#fdb462",
    "#b3de69",
    "#fccde5",
    "#bc80bd",
    "#ccebc5",
    "#ffed6f",
)
FONT = 10  # px, the buffer labels
CHAR_WIDTH = 0.62  # an upper estimate of a sans-serif character's width, in font sizes
LINE = 1.2 * FONT  # the height a line of label text takes
_LEFT, _RIGHT, _TOP = 70, 110, 46  # plot margins: tick labels, the lower bound's label, title
_UNITS = ((MIB, "MiB"), (1024, "KiB"), (1, "B"))


def text_width(text: str, size: float = FONT) -> float:
    """The width `text` takes at font `size`, estimated from above (no font metrics here)."""
    return len(text) * size * CHAR_WIDTH


def _size(count: int) -> str:
    """`count` bytes in the largest unit it reaches, for a buffer's label."""
    scale, unit = next((s, u) for s, u in _UNITS if count >= s or s == 1)
    return f"{count} B" if scale == 1 else f"{count / scale:.{2 if scale == MIB else 1}f} {unit}"


def _ticks(limit: float, integers: bool = False) -> list[float]:
    """Round tick values from 0 to at most `limit`, about five of them."""
    if limit <= 0:
        return [0.0]
    raw = limit / 5
    magnitude = 10 ** math.floor(math.log10(raw))
    steps = (1, 2, 5, 10) if integers else (1, 2, 2.5, 5, 10)
    step = next(s * magnitude for s in steps if s * magnitude >= raw)
    if integers:
        step = max(1.0, round(step))
    return [n * step for n in range(int(limit / step + 1e-9) + 1)]


@dataclass(frozen=True)
class Box:
    """A rectangle in picture coordinates (y grows downwards)."""

    left: float
    top: float
    right: float
    bottom: float

    def overlaps(self, other: Box) -> bool:
        return (
            self.left < other.right
            and other.left < self.right
            and self.top < other.bottom
            and other.top < self.bottom
        )

    def within(self, other: Box) -> bool:
        return (
            other.left <= self.left
            and self.right <= other.right
            and other.top <= self.top
            and self.bottom <= other.bottom
        )


def label_box(
    x: float, y: float, width: float, rotated: bool, anchor: str = "middle", size: float = FONT
) -> Box:
    """The box a one-line label at (x, y) takes: centred vertically on y, horizontally as
    the SVG `anchor` says (rotated, reading upwards: centred on both)."""
    half_h = 0.6 * size
    if rotated:
        return Box(x - half_h, y - width / 2, x + half_h, y + width / 2)
    left = {"start": x, "middle": x - width / 2, "end": x - width}[anchor]
    return Box(left, y - half_h, left + width, y + half_h)


def _chain_colours(plan: FunctionPlan) -> dict[str, str]:
    """A palette colour for each in-place chain, different from the chains it touches in the
    picture where the palette allows, else the least used among its neighbours' colours."""
    extent: dict[str, tuple[int, int, int, int]] = {}
    for b in plan.buffers:
        first, last, low, high = extent.get(b.chain, (b.interval.start, 0, b.offset, 0))
        extent[b.chain] = (
            min(first, b.interval.start),
            max(last, b.interval.end),
            low,
            max(high, b.offset + b.interval.size),
        )
    colours: dict[str, str] = {}
    used = dict.fromkeys(PALETTE, 0)
    for chain, (first, last, low, high) in sorted(extent.items(), key=lambda e: e[1]):
        near = [
            colours[other]
            for other, (f, la, lo, hi) in extent.items()
            if other in colours and f <= last + 1 and first <= la + 1 and lo <= high and low <= hi
        ]
        colour = min(PALETTE, key=lambda c: (near.count(c), used[c]))
        colours[chain] = colour
        used[colour] += 1
    return colours


@dataclass(frozen=True)
class _Frame:
    """The plot area of one panel: op index `0..steps` on x, arena offset `0..arena` on y."""

    plot: Box
    steps: int
    arena: int
    bound: int

    def x(self, step: float) -> float:
        return self.plot.left + (self.plot.right - self.plot.left) * step / self.steps

    def y(self, offset: float) -> float:
        return self.plot.bottom - (self.plot.bottom - self.plot.top) * offset / self.arena

    def box(self, b: PlannedBuffer, overwritten: bool) -> Box:
        """`b`'s rectangle; an in-place pair shares the step of the op that overwrites: the
        boundary between their rectangles lies in its middle."""
        start = b.interval.start + (0.5 if b.overwrites else 0.0)
        end = b.interval.end + (0.5 if overwritten else 1.0)
        top, bottom = self.y(b.offset + b.interval.size), self.y(b.offset)
        return Box(self.x(start), top, self.x(end), max(bottom, top + 0.5))


Place = tuple[float, float, bool, str]  # a label's x, y, whether rotated, its text-anchor


class _Labels:
    """Label boxes placed so far; a new one goes inside its buffer's rectangle, or beside it
    where it covers no rectangle and no other label."""

    def __init__(self, plot: Box, rectangles: Sequence[Box]) -> None:
        self.plot, self.rectangles, self.placed = plot, rectangles, list[Box]()

    def _free(self, boxes: list[Box], inside: Box | None) -> bool:
        if any(b.overlaps(p) for b in boxes for p in self.placed):
            return False
        if inside is not None:
            shrunk = Box(inside.left + 1, inside.top + 1, inside.right - 1, inside.bottom - 1)
            return all(b.within(shrunk) for b in boxes)
        return all(
            b.within(self.plot) and not any(b.overlaps(r) for r in self.rectangles) for b in boxes
        )

    def inside(self, rect: Box, lines: Sequence[str], turn: bool = True) -> list[Place] | None:
        """Where `lines` go inside `rect` (across, else reading upwards if `turn`), if they
        fit."""
        cx, cy = (rect.left + rect.right) / 2, (rect.top + rect.bottom) / 2
        shifts = [(n - (len(lines) - 1) / 2) * LINE for n in range(len(lines))]
        for rotated in (False, True) if turn else (False,):
            places = [
                (cx + s, cy, True, "middle") if rotated else (cx, cy + s, False, "middle")
                for s in shifts
            ]
            if self._try(places, lines, rect):
                return places
        return None

    def beside(self, rect: Box, text: str) -> list[Place] | None:
        """Where `text` goes right of, left of, above or below `rect`, if free there."""
        half_h = 0.6 * FONT
        cx, cy = (rect.left + rect.right) / 2, (rect.top + rect.bottom) / 2
        cy = min(max(cy, self.plot.top + half_h), self.plot.bottom - half_h)  # a flat one's
        for place in (
            (rect.right + 2, cy, False, "start"),
            (rect.left - 2, cy, False, "end"),
            (cx, rect.top - 1 - half_h, False, "middle"),
            (cx, rect.bottom + 1 + half_h, False, "middle"),
        ):
            if self._try([place], [text], None):
                return [place]
        return None

    def _try(self, places: list[Place], lines: Sequence[str], inside: Box | None) -> bool:
        boxes = [
            label_box(x, y, text_width(t), r, a)
            for (x, y, r, a), t in zip(places, lines, strict=True)
        ]
        if not self._free(boxes, inside):
            return False
        self.placed += boxes
        return True


def _text(place: Place, text: str) -> str:
    x, y, rotated, anchor = place
    turn = f' transform="rotate(-90 {x:.1f} {y:.1f})"' if rotated else ""
    return (
        f'<text class="label" x="{x:.1f}" y="{y:.1f}" font-size="{FONT}" text-anchor="{anchor}" '
        f'dominant-baseline="central" stroke="white" stroke-width="2" stroke-opacity="0.7" '
        f'paint-order="stroke"{turn}>{escape(text)}</text>'
    )


def _area(box: Box) -> float:
    return (box.right - box.left) * (box.bottom - box.top)


def _labels(
    frame: _Frame, placed: Sequence[tuple[PlannedBuffer, Box]]
) -> tuple[list[str], list[tuple[str, PlannedBuffer]]]:
    """Each buffer's label, "%name size", inside its rectangle or beside it; a buffer whose
    label fits nowhere gets a number instead (listed under the picture) or, where even that
    does not fit, only its tooltip (and "-" in the list). Returns the text elements and the
    list: (number or "-", buffer)."""
    labels = _Labels(frame.plot, [rect for _, rect in placed])
    bound = frame.y(frame.bound)  # no label across the lower bound's line
    labels.placed.append(Box(frame.plot.left, bound - 1.5, frame.plot.right, bound + 1.5))
    out: list[str] = []
    rest = []
    for b, rect in sorted(placed, key=lambda p: -_area(p[1])):
        name, size = f"%{b.name}", _size(b.interval.size)
        lines = [f"{name} {size}"]
        centres = labels.inside(rect, lines)
        if centres is None:
            lines = [name, size]
            centres = labels.inside(rect, lines)
        if centres is None:
            lines = [f"{name} {size}"]
            centres = labels.beside(rect, lines[0])
        if centres is None:
            rest.append((b, rect))
            continue
        out += [_text(place, t) for place, t in zip(centres, lines, strict=True)]
    key: list[tuple[str, PlannedBuffer]] = []
    for b, rect in sorted(rest, key=lambda p: (p[1].left, -p[1].bottom)):
        number = str(1 + sum(mark != "-" for mark, _ in key))
        centres = (
            labels.inside(rect, [number], turn=False)
            or labels.beside(rect, number)
            or labels.inside(rect, [number])  # on its side, rather than not at all
        )
        key.append((number if centres else "-", b))
        out += [_text(place, number) for place in centres or []]
    return out, key


def _axis_unit(count: int) -> tuple[int, str]:
    """The unit of the offset axis: the largest one `count` (the arena) reaches."""
    return next((s, u) for s, u in _UNITS if count >= s or s == 1)


def _number(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _buffer(b: PlannedBuffer, rect: Box, colour: str) -> list[str]:
    """`b`'s rectangle, its channel padding and halo as hatched bands at its top (their
    heights in proportion to their bytes), and its tooltip."""
    w, h = rect.right - rect.left, rect.bottom - rect.top
    tip = (
        f"%{escape(b.name)}: {b.interval.size} bytes at offset {b.offset}, steps "
        f"{b.interval.start}-{b.interval.end}; channel padding {b.padding - b.halo} bytes, "
        f"halo {b.halo} bytes" + (f"; in place of %{escape(b.overwrites)}" if b.overwrites else "")
    )
    out = [
        f'<rect class="buffer" x="{rect.left:.1f}" y="{rect.top:.1f}" width="{w:.1f}" '
        f'height="{h:.1f}" fill="{colour}" stroke="#333" stroke-width="0.5">'
        f"<title>{tip}</title></rect>"
    ]
    top = round(rect.top, 1)
    for kind, count in (("padding", b.padding - b.halo), ("halo", b.halo)):
        bottom = round(top + h * min(count, b.interval.size) / max(b.interval.size, 1), 1)
        if bottom - top >= 0.2:
            out.append(
                f'<rect class="{kind}" x="{rect.left:.1f}" y="{top:.1f}" width="{w:.1f}" '
                f'height="{bottom - top:.1f}" fill="url(#{kind})" pointer-events="none"/>'
            )
            top = bottom
    return out


def _axes(frame: _Frame, scale: int, unit: str) -> list[str]:
    """Grid lines and tick labels: op index on x, arena offset in `unit` on y."""
    plot = frame.plot
    out = [
        f'<rect class="plot" x="{plot.left}" y="{plot.top}" width="{plot.right - plot.left}" '
        f'height="{plot.bottom - plot.top}" fill="white" stroke="#444"/>'
    ]
    for value in _ticks(frame.arena / scale):
        y = frame.y(value * scale)
        out.append(
            f'<line x1="{plot.left}" x2="{plot.right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
        )
        out.append(
            f'<text class="tick" x="{plot.left - 6}" y="{y + 4:.1f}" '
            f'text-anchor="end">{_number(value)}</text>'
        )
    for step in _ticks(frame.steps - 1, integers=True):
        x = frame.x(step + 0.5)
        out.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{plot.bottom}" y2="{plot.bottom + 4}" '
            'stroke="#444"/>'
        )
        out.append(
            f'<text class="tick" x="{x:.1f}" y="{plot.bottom + 16}" '
            f'text-anchor="middle">{int(step)}</text>'
        )
    middle = (plot.top + plot.bottom) / 2
    out.append(
        f'<text x="{(plot.left + plot.right) / 2}" y="{plot.bottom + 32}" '
        'text-anchor="middle">op index (the ops that touch buffers, in order)</text>'
    )
    out.append(
        f'<text class="y-axis" x="16" y="{middle}" text-anchor="middle" '
        f'transform="rotate(-90 16 {middle})">'
        f"arena offset ({unit})</text>"
    )
    return out


def _lower_bound(frame: _Frame, plan: FunctionPlan, scale: int, unit: str) -> list[str]:
    plot, y = frame.plot, frame.y(plan.lower_bound_bytes)
    return [
        f'<line class="lower-bound" x1="{plot.left}" x2="{plot.right + 6}" y1="{y:.1f}" '
        f'y2="{y:.1f}" stroke="#d00" stroke-width="1.5" stroke-dasharray="6,3"/>',
        f'<text x="{plot.right + 8}" y="{y - 2:.1f}" fill="#d00">lower bound</text>',
        f'<text x="{plot.right + 8}" y="{y + 11:.1f}" fill="#d00">'
        f"{_number(plan.lower_bound_bytes / scale)} {unit}</text>",
    ]


def _legend(left: float, top: float, width: float, numbered: bool) -> tuple[list[str], float]:
    """What the marks mean, in rows from (`left`, `top`); returns the elements and the y
    below them."""
    swatches = [
        (
            f'<rect width="14" height="10" fill="{PALETTE[0]}" stroke="#333" stroke-width="0.5"/>',
            "buffer, labelled %name size (one colour per in-place chain)",
        ),
        (
            f'<rect width="14" height="10" fill="{PALETTE[4]}" stroke="#333" stroke-width="0.5"/>'
            '<rect width="14" height="10" fill="url(#padding)"/>',
            "channel padding (its share of the buffer)",
        ),
        (
            f'<rect width="14" height="10" fill="{PALETTE[4]}" stroke="#333" stroke-width="0.5"/>'
            '<rect width="14" height="10" fill="url(#halo)"/>',
            "halo border",
        ),
        (
            '<line x1="0" x2="14" y1="5" y2="5" stroke="#d00" stroke-width="1.5" '
            'stroke-dasharray="6,3"/>',
            "lower bound (most bytes live at once)",
        ),
    ]
    if numbered:
        swatches.append(('<text x="7" y="9" text-anchor="middle">7</text>', "buffer listed below"))
    out = ['<g class="legend">']
    x, y = left, top
    for swatch, text in swatches:
        item = 20 + text_width(text, 11) + 18
        if x > left and x + item > left + width:
            x, y = left, y + 18
        out.append(
            f'<g class="legend-item" transform="translate({x:.1f} {y:.1f})">{swatch}'
            f'<text x="20" y="9">{escape(text)}</text></g>'
        )
        x += item
    out.append("</g>")
    return out, y + 22


def _key(
    left: float, top: float, width: float, key: Sequence[tuple[str, PlannedBuffer]]
) -> tuple[list[str], float]:
    """The list of buffers labelled by number, in columns; returns elements and the y below."""
    if not key:
        return [], top
    entries = [
        f"{mark:>3}  %{b.name}  {_size(b.interval.size)}, op {b.interval.start}-{b.interval.end}"
        for mark, b in key
    ]
    column = max(text_width(e, 11) for e in entries) + 24
    columns = max(1, int(width // column))
    rows = -(-len(entries) // columns)
    out = [
        f'<text x="{left}" y="{top + 10}" font-weight="bold">Buffers whose label did not fit, '
        'by number ("-": too small to mark; its tooltip names it)</text>'
    ]
    for n, entry in enumerate(entries):
        x, y = left + column * (n // rows), top + 26 + 14 * (n % rows)
        out.append(
            f'<text class="key" x="{x:.1f}" y="{y}" xml:space="preserve">{escape(entry)}</text>'
        )
    return out, top + 26 + 14 * rows


def _panel(plan: FunctionPlan, top: float, width: int, plot_height: int) -> tuple[list[str], float]:
    """The SVG elements of one plan's panel from y = `top`, and the y below it."""
    frame = _Frame(
        Box(_LEFT, top + _TOP, width - _RIGHT, top + _TOP + plot_height),
        max(plan.steps, 1),
        max(plan.arena_bytes, 1),
        plan.lower_bound_bytes,
    )
    scale, unit = _axis_unit(frame.arena)
    arena, bound, unplanned, padding = (
        f"{_number(count / scale)} {unit}"
        for count in (
            plan.arena_bytes,
            plan.lower_bound_bytes,
            plan.unplanned_bytes,
            plan.padding_bytes,
        )
    )
    figures = (
        f"arena {arena}, lower bound {bound}; unplanned {unplanned}, of which "
        f"{padding} channel padding and halo"
    )
    out = [
        f'<text class="title" x="{_LEFT}" y="{top + 20}" font-size="13" font-weight="bold">'
        f"@{escape(plan.function)}: {figures}</text>",
        *_axes(frame, scale, unit),
    ]
    overwritten = {b.overwrites for b in plan.buffers}
    colours = _chain_colours(plan)
    placed = [(b, frame.box(b, b.name in overwritten)) for b in plan.buffers]
    for b, rect in placed:
        out += _buffer(b, rect, colours[b.chain])
    labels, key = _labels(frame, placed)
    out += labels + _lower_bound(frame, plan, scale, unit)
    legend, below = _legend(_LEFT, frame.plot.bottom + 46, width - _LEFT - 20, bool(key))
    listed, below = _key(_LEFT, below, width - _LEFT - 20, key)
    return ['<g class="panel">', *out, *legend, *listed, "</g>"], below + 10


_DEFS = """<defs>
<pattern id="padding" width="6" height="6" patternUnits="userSpaceOnUse"
 patternTransform="rotate(45)">
<line x1="0" y1="0" x2="0" y2="6" stroke="#333" stroke-width="1.5" stroke-opacity="0.6"/></pattern>
<pattern id="halo" width="5" height="5" patternUnits="userSpaceOnUse">
<circle cx="2.5" cy="2.5" r="1.1" fill="#333" fill-opacity="0.7"/></pattern>
</defs>"""


def plan_svg(
    plans: Sequence[FunctionPlan], width: int | None = None, plot_height: int = 320
) -> str:
    """An SVG document with one panel per plan (hand-written: rectangles and text); by
    default 14 px per op, at least 960 and at most 2400 px wide."""
    steps = max((p.steps for p in plans), default=1)
    width = width or min(2400, max(960, _LEFT + _RIGHT + 14 * steps))
    body, top = [], 0.0
    for plan in plans:
        elements, top = _panel(plan, top, width, plot_height)
        body += elements
    height = max(top, 40)
    return (
        "\n".join(
            [
                f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height:.0f}" '
                'font-family="Arial, Helvetica, \'Liberation Sans\', sans-serif" font-size="11">',
                _DEFS,
                f'<rect width="{width}" height="{height:.0f}" fill="white"/>',
                *body,
                "</svg>",
            ]
        )
        + "\n"
    )
