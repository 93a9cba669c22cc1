"""The memory-plan picture (`plan-memory{svg=...}`, transforms/memory_report.py) read back as
SVG: every buffer a rectangle named by a label (inside it, beside it, or a number listed under
the picture), no two labels overlapping, a legend, the lower bound as a line at its height,
padding and halo as bands inside their buffers, one unit on the offset axis, touching chains
in different colours; and the picture as headless Chromium draws it
(scripts/plan_screenshot.sh, skipped without Chromium)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from xdsl.dialects import func

from nnlayout.examples.make_models import build
from nnlayout.frontends.onnx import import_model
from nnlayout.ir.context import make_context
from nnlayout.transforms.default_pipeline import DefaultPipelinePass
from nnlayout.transforms.memory_plan import FunctionPlan, Interval, Placement, PlannedBuffer
from nnlayout.transforms.memory_report import plan_svg
from nnlayout.transforms.plan_memory import plan_function

SVG = "{http://www.w3.org/2000/svg}"
ROOT = Path(__file__).resolve().parents[2]
CHAR = 0.62  # the widest a character of the labels' sans-serif font is, in font sizes
Box = tuple[float, float, float, float]  # left, top, right, bottom


def classed(root: ElementTree.Element, tag: str, name: str) -> list[ElementTree.Element]:
    return [e for e in root.iter(SVG + tag) if name in (e.get("class") or "").split()]


def text_box(e: ElementTree.Element) -> Box:
    """Where a label's text lies: centred on y, horizontally by its anchor; turned upwards
    by rotate(-90) about its own point, centred on both."""
    x, y, size = float(e.get("x", 0)), float(e.get("y", 0)), float(e.get("font-size", 11))
    width, half = len(e.text or "") * size * CHAR, 0.6 * size
    if "rotate(-90" in (e.get("transform") or ""):
        return x - half, y - width / 2, x + half, y + width / 2
    left = {"start": x, "middle": x - width / 2, "end": x - width}[e.get("text-anchor", "start")]
    return left, y - half, left + width, y + half


def rect_box(e: ElementTree.Element) -> Box:
    x, y = float(e.get("x", 0)), float(e.get("y", 0))
    return x, y, x + float(e.get("width", 0)), y + float(e.get("height", 0))


def overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def inside(a: Box, b: Box) -> bool:
    return (
        b[0] - 0.05 <= a[0] and a[2] <= b[2] + 0.05 and b[1] - 0.05 <= a[1] and a[3] <= b[3] + 0.05
    )


def check_picture(svg: str, plans: list[FunctionPlan]) -> ElementTree.Element:
    """The properties every picture has; returns the parsed SVG."""
    root = ElementTree.fromstring(svg)
    labels = classed(root, "text", "label")
    boxes = [text_box(e) for e in labels]
    for n, a in enumerate(boxes):
        assert not [labels[m].text for m in range(n) if overlap(a, boxes[m])], labels[n].text
        assert a[0] >= 0 and a[2] <= float(root.get("width", 0)), labels[n].text
    panels = classed(root, "g", "panel")
    assert len(panels) == len(plans)
    for panel, plan in zip(panels, plans, strict=True):
        check_panel(panel, plan)
    return root


def check_panel(panel: ElementTree.Element, plan: FunctionPlan) -> None:
    assert len(classed(panel, "rect", "buffer")) == len(plan.buffers)
    # Each buffer named: its label "%name size" (one line or two) or a number in the key.
    texts = {e.text for e in classed(panel, "text", "label")}
    key = [e.text or "" for e in classed(panel, "text", "key")]
    marks = {k.split()[0] for k in key} - {"-"}
    assert marks == texts & {str(n) for n in range(1, len(key) + 1)}
    for b in plan.buffers:
        named = f"%{b.name}" in texts or any(t.startswith(f"%{b.name} ") for t in texts if t)
        assert named or any(k.split()[1] == f"%{b.name}" for k in key), b.name
    # The legend says what the marks mean.
    legend = "".join(classed(panel, "g", "legend")[0].itertext())
    for meaning in ("buffer", "channel padding", "halo", "lower bound"):
        assert meaning in legend
    # The lower bound: a line at its height in the plot; one unit on the offset axis.
    plot = rect_box(classed(panel, "rect", "plot")[0])
    (line,) = classed(panel, "line", "lower-bound")
    height = plot[3] - plot[1]
    want = plot[3] - height * plan.lower_bound_bytes / max(plan.arena_bytes, 1)
    assert abs(float(line.get("y1", 0)) - want) < 0.1
    for tick in classed(panel, "text", "tick"):
        float(tick.text or "")  # bare numbers: the unit is in the axis title
    title = "".join(classed(panel, "text", "title")[0].itertext())
    axis = "".join(classed(panel, "text", "y-axis")[0].itertext())
    assert set(re.findall(r"\d ([KM]?i?B)\b", title)) == set(re.findall(r"\((\w+)\)", axis))


def buffer(
    name: str, start: int, end: int, size: int, offset: int, **extra: object
) -> PlannedBuffer:
    fields: dict[str, object] = {"chain": name, "overwrites": None, "padding": 0, "halo": 0}
    fields.update(extra)
    return PlannedBuffer(name, Interval(start, end, size), offset, **fields)  # type: ignore[arg-type]


def synthetic(buffers: list[PlannedBuffer], steps: int) -> FunctionPlan:
    arena = max(b.offset + b.interval.size for b in buffers)
    offsets = tuple(b.offset for b in buffers)
    return FunctionPlan(
        "f",
        tuple(buffers),
        Placement(offsets, arena, "greedy-by-size", {"greedy-by-size": arena}),
        lower_bound_bytes=arena * 9 // 10,
        peak_step=0,
        unplanned_bytes=sum(b.interval.size for b in buffers),
        padding_bytes=sum(b.padding for b in buffers),
        halo_bytes=sum(b.halo for b in buffers),
        steps=steps,
    )


def test_labels_go_inside_beside_or_by_number() -> None:
    """A large buffer holds its label; a flat one has it beside it (and the one on it,
    whose label would go there too, gets a number); in a column of buffers
    at the last step, walled in on the left, those whose labels fit nowhere get numbers, and
    those too thin even for a number a "-" in the list under the plot."""
    column = [buffer(f"col{n}", 19, 19, 100, 1000 + 100 * n) for n in range(9)]
    column += [buffer(f"tiny{n}", 19, 19, 5, 1900 + 5 * n) for n in range(20)]
    plan = synthetic(
        [
            buffer("big", 0, 9, 1000, 0),
            buffer("flat", 10, 10, 10, 0),
            buffer("flat2", 10, 10, 10, 10),  # its label would cover flat's
            buffer("wall", 0, 18, 1000, 1000),
            *column,
        ],
        20,
    )
    root = check_picture(plan_svg([plan]), [plan])
    labels = {e.text: e for e in classed(root, "text", "label")}
    rects = {
        (e.findtext(f"{SVG}title") or "").split(":")[0]: rect_box(e)
        for e in classed(root, "rect", "buffer")
    }
    assert inside(text_box(labels["%big 1000 B"]), rects["%big"])
    flat = text_box(labels["%flat 10 B"])
    assert not overlap(flat, rects["%flat"]) and 0 < flat[0] - rects["%flat"][2] < 3
    key = {k.split()[1]: k.split()[0] for k in (e.text or "" for e in classed(root, "text", "key"))}
    for n in range(9):
        assert inside(text_box(labels[key[f"%col{n}"]]), rects[f"%col{n}"])
    assert {key[f"%tiny{n}"] for n in range(20)} == {"-"}


def test_padding_halo_and_in_place_chains() -> None:
    """Channel padding and halo are bands inside their buffer, in proportion to their bytes;
    an in-place pair shares a colour and meets mid-step; a chain touching it differs."""
    plan = synthetic(
        [
            buffer("a", 0, 3, 1000, 0, padding=300, halo=100),
            buffer("b", 3, 6, 1000, 0, chain="a", overwrites="a"),
            buffer("c", 2, 6, 500, 1000),
        ],
        8,
    )
    root = check_picture(plan_svg([plan]), [plan])
    a, b, c = (rect_box(e) for e in classed(root, "rect", "buffer"))
    fills = [e.get("fill") for e in classed(root, "rect", "buffer")]
    assert fills[0] == fills[1] != fills[2]
    plot = rect_box(classed(root, "rect", "plot")[0])
    step = (plot[2] - plot[0]) / 8
    assert a[2] == b[0] == pytest.approx(plot[0] + 3.5 * step, abs=0.1)  # the middle of op 3
    (padding,) = (rect_box(e) for e in classed(root, "rect", "padding"))
    (halo,) = (rect_box(e) for e in classed(root, "rect", "halo"))
    assert inside(padding, a) and inside(halo, a) and not overlap(padding, halo)
    assert padding[3] - padding[1] == pytest.approx(0.2 * (a[3] - a[1]), abs=0.1)
    assert halo[3] - halo[1] == pytest.approx(0.1 * (a[3] - a[1]), abs=0.1)


@pytest.fixture(scope="module")
def unet_plan() -> FunctionPlan:
    """The small U-Net's plan on avx2 with padding: channel padding and halos."""
    module = import_model(build("unet", small=True), inline_limit=16).module
    *passes, _ = DefaultPipelinePass("avx2", True).passes()
    for one_pass in passes:
        one_pass.apply(make_context(), module)
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    return plan_function(function)[0]


def test_picture_of_a_zoo_plan(unet_plan: FunctionPlan) -> None:
    root = check_picture(plan_svg([unet_plan, unet_plan]), [unet_plan, unet_plan])  # two panels
    assert classed(root, "rect", "padding") and classed(root, "rect", "halo")
    full = [e.text for e in classed(root, "text", "label") if (e.text or "").startswith("%")]
    assert len(full) >= 4  # most buffers named in the picture itself
    assert "(KiB)" in "".join(classed(root, "text", "y-axis")[0].itertext())


@pytest.mark.slow
@pytest.mark.skipif(
    not (
        os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    ),
    reason="needs Chromium (apt-get install chromium) for the screenshot",
)
def test_screenshot_in_chromium(tmp_path: Path) -> None:
    """scripts/plan_screenshot.sh draws the small U-Net's plan and Chromium renders it: a PNG
    as large as the SVG says (look at it: the script prints its path)."""
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / "plan_screenshot.sh"), "", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    png = (tmp_path / "plan.png").read_bytes()
    svg = ElementTree.parse(tmp_path / "plan.svg").getroot()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (int(svg.get("width", 0)), int(svg.get("height", 0)))
    assert len(png) > 20_000  # not a blank page: boxes, hatching and text
