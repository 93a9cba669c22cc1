"""Compile time against program size: seconds per pass for chains and wide-live graphs.

    python -m nnlayout.benchmarks.compile_scale                      # 1k, 5k, 20k, 50k ops
    python -m nnlayout.benchmarks.compile_scale --sizes 1000,5000 --kinds chain --markdown

For each kind and size it writes a module of that many `nn` ops, runs
`nnlayout-translate -p default-pipeline --to numpy --time-passes` on it in a subprocess (as a
user would, start-up included) and prints one row: the seconds of each step of the table that
`--time-passes` prints (parse and verify, each pass, the final verify, translate), the total
wall time, the child's CPU time (user + system: on a busy machine the figure that does not
depend on what else runs) and the CPU microseconds per op, whose flatness across sizes says
that compile time is linear in the number of ops.

Kinds: `chain`, element-wise ops each reading the previous one (relu, sigmoid, ... in place);
`wide`, additions each reading the previous value and, every third op, one computed 1,000 ops
before, so that hundreds of values are live at once and the planner has many buffers to place.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

TENSOR = "tensor<1x8x4x4xf32>"
KINDS = ("chain", "wide")
UNARY = ("nn.relu", "nn.sigmoid", "nn.tanh", "nn.abs")
# Steps of the --time-passes table, in the order printed; a default-pipeline step is shown by
# the name of the pass inside the parentheses.
_ROW = re.compile(r"^\s*([0-9.]+)\s+\(\s*[0-9.]+%\)\s+(.+?)\s*$")


def module_text(kind: str, ops: int) -> str:
    """A function of `ops` nn ops of `kind` on one small activation."""
    lines = [f"func.func @main(%x: {TENSOR}) -> {TENSOR} {{"]
    previous = "%x"
    for i in range(ops):
        if kind == "chain":
            lines.append(f"  %v{i} = {UNARY[i % len(UNARY)]} {previous} : {TENSOR}")
        else:
            other = f"%v{i - 1000}" if i >= 1000 and i % 3 == 0 else "%x"
            lines.append(f"  %v{i} = nn.add {previous}, {other} : ({TENSOR}, {TENSOR}) -> {TENSOR}")
        previous = f"%v{i}"
    lines += [f"  func.return {previous} : {TENSOR}", "}"]
    return "\n".join(lines) + "\n"


def measure(kind: str, ops: int, folder: Path) -> tuple[dict[str, float], float, float]:
    """The --time-passes steps, the wall seconds and the CPU seconds of one translate run."""
    source = folder / f"{kind}{ops}.mlir"
    source.write_text(module_text(kind, ops))
    command = [
        *(sys.executable, "-m", "nnlayout.tools.translate", str(source)),
        *("-p", "default-pipeline", "--to", "numpy", "--time-passes"),
        *("-o", str(folder / f"{kind}{ops}.py")),
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ))
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"compile_scale: translate failed on {source}:\n{done.stderr}")
    steps: dict[str, float] = {}
    for line in done.stderr.splitlines():
        if (row := _ROW.match(line)) and row[2] != "Total":
            label = row[2].removeprefix("default-pipeline (").removesuffix(")")
            steps[label] = steps.get(label, 0.0) + float(row[1])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return steps, wall, cpu


def table(rows: Sequence[tuple[str, int, dict[str, float], float, float]], markdown: bool) -> str:
    """One row per run; the steps that take at least 2% of some run get a column each."""
    labels: list[str] = []
    for _, _, steps, wall, _ in rows:
        for label, seconds in steps.items():
            if seconds >= 0.02 * wall and label not in labels:
                labels.append(label)
    head = ["kind", "ops", *labels, "other", "wall s", "cpu s", "cpu us/op"]
    body = []
    for kind, ops, steps, wall, cpu in rows:
        shown = [steps.get(label, 0.0) for label in labels]
        other = sum(steps.values()) - sum(shown)
        cells = [f"{s:.2f}" for s in (*shown, other, wall, cpu)]
        body.append([kind, str(ops), *cells, f"{1e6 * cpu / ops:.0f}"])
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in body])
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    rows = [head, *body]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m nnlayout.benchmarks.compile_scale",
        description=(
            "Seconds per compile step (nnlayout-translate -p default-pipeline) for chains and "
            "wide-live graphs of growing size, with CPU microseconds per op."
        ),
    )
    parser.add_argument(
        "--sizes", default="1000,5000,20000,50000", help="comma-separated op counts"
    )
    parser.add_argument(
        "--kinds", default=",".join(KINDS), help=f"comma-separated, of {', '.join(KINDS)}"
    )
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args(argv)
    try:
        sizes = [int(size) for size in args.sizes.split(",")]
    except ValueError:
        parser.error(f"--sizes: expected comma-separated integers, got {args.sizes!r}")
    kinds = args.kinds.split(",")
    if bad := [k for k in kinds if k not in KINDS] or [s for s in sizes if s < 1]:
        parser.error(f"unknown kind or size: {bad}")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for kind in kinds:
            for ops in sizes:
                rows.append((kind, ops, *measure(kind, ops, Path(folder))))
                print(f"{kind} {ops}: {rows[-1][3]:.1f} s", file=sys.stderr, flush=True)
    print(table(rows, args.markdown))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
