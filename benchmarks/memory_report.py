"""How much memory the zoo needs once `plan-memory` has placed its buffers in one arena.

    python -m nnlayout.benchmarks.memory_report                      # full-size zoo
    python -m nnlayout.benchmarks.memory_report --small resnet50 --details --svg plans/

For each model, target (avx512, avx2) and channel padding (on, off) it compiles the model with
`default-pipeline` up to `bufferize`, times `plan-memory` alone, checks the plan with
`verify-memory-plan`, and prints: the sum of all intermediate buffers (unplanned), the lower
bound (most bytes live at one step, in-place pairs once), the arena, arena/bound, the padding
in the arena's buffers (channel padding and halo borders; the halo also on its own) and the
planning time. TVM 0.27's Relax planner on the same full-size graphs is given for reference
(arena, its live bound without in-place reuse, and with in-place element-wise ops), plain
float32 layouts; with `--small` it is not (it was not measured on the small variants).
`--details` prints each plan's report (the largest buffers at the peak); `--svg DIR` draws
each plan. Exits 1 if an arena exceeds 1.02 x its lower bound or a plan fails verification.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from nnlayout.benchmarks.layout_report import load
from nnlayout.examples.make_models import MODELS_DIR, ZOO
from nnlayout.ir.context import make_context
from nnlayout.tools.driver import description
from nnlayout.transforms.default_pipeline import DefaultPipelinePass
from nnlayout.transforms.memory_report import format_report, plan_svg
from nnlayout.transforms.plan_memory import PlanMemoryPass, plan_function
from nnlayout.transforms.verify_memory_plan import VerifyMemoryPlanPass

MIB = 1 << 20
RATIO_GOAL = 1.02
# TVM 0.27 Relax (StaticPlanBlockMemory) on the same graphs, MiB: arena, live bound without
# in-place reuse, live bound with in-place element-wise ops.
TVM: dict[str, tuple[float, float, float]] = {
    "resnet50": (9.38, 9.19, 6.89),
    "mobilenet_v2": (8.24, 9.19, 5.74),
    "unet": (19.50, 16.00, 16.00),
    "densenet121": (21.03, 8.04, 6.89),
}


@dataclass
class Row:
    model: str
    target: str
    padding: bool
    unplanned: int
    bound: int
    arena: int
    padding_bytes: int
    halo_bytes: int
    seconds: float

    @property
    def ratio(self) -> float:
        return self.arena / self.bound if self.bound else 1.0


def measure(
    name: str, module: ModuleOp, target: str, padding: bool, details: bool, svg_dir: Path | None
) -> Row:
    """Compiles a clone of `module`, plans its memory (timed) and checks the plan."""
    compiled = module.clone()
    ctx = make_context()
    *before, planner = DefaultPipelinePass(target, padding).passes()
    assert isinstance(planner, PlanMemoryPass)
    for one_pass in before:
        one_pass.apply(ctx, compiled)
    function = next(op for op in compiled.ops if isinstance(op, func.FuncOp))
    if details or svg_dir is not None:
        plan, _ = plan_function(function)  # the same plan, for its report and picture
        label = f"{name} {target} padding={'on' if padding else 'off'}"
        if details:
            print(f"--- {label}\n{format_report(plan)}")
        if svg_dir is not None:
            svg_dir.mkdir(parents=True, exist_ok=True)
            path = svg_dir / f"{label.replace(' ', '_').replace('=', '-')}.svg"
            path.write_text(plan_svg([plan]), encoding="utf-8")
    start = time.perf_counter()
    planner.apply(ctx, compiled)
    seconds = time.perf_counter() - start
    VerifyMemoryPlanPass().apply(ctx, compiled)
    figures = {
        key: value.value.data
        for key, value in function.attributes.items()
        if key.startswith("nnlayout.")
    }
    return Row(
        name,
        target,
        padding,
        figures["nnlayout.unplanned_bytes"],
        figures["nnlayout.lower_bound_bytes"],
        figures["nnlayout.arena_bytes"],
        figures["nnlayout.padding_bytes"],
        figures["nnlayout.halo_bytes"],
        seconds,
    )


def format_row(r: Row) -> str:
    """One row; TVM's figures only beside a full-size model (they were measured on those)."""
    tvm = None if r.model.endswith("_small") else TVM.get(r.model)
    reference = "" if tvm is None else f"{tvm[0]:>9.2f} {tvm[1]:>9.2f} {tvm[2]:>9.2f}"
    return (
        f"{r.model:<16} {r.target:<7} {'on' if r.padding else 'off':<4} "
        f"{r.unplanned / MIB:>10.2f} {r.bound / MIB:>9.2f} {r.arena / MIB:>9.2f} "
        f"{r.ratio:>7.3f} {r.padding_bytes / 1024:>9.1f} {r.halo_bytes / 1024:>9.1f} "
        f"{r.seconds:>7.3f}  {reference}"
    ).rstrip()


_COLUMNS = (
    f"{'model':<16} {'target':<7} {'pad':<4} {'unplanned':>10} {'bound':>9} "
    f"{'arena':>9} {'a/bound':>7} {'pad KiB':>9} {'halo KiB':>9} {'plan s':>7}",
    f"{'':<16} {'':<7} {'':<4} {'MiB':>10} {'MiB':>9} {'MiB':>9} {'':>7} "
    f"{'(all)':>9} {'':>9} {'':>7}",
)
_TVM_COLUMNS = (
    f"  {'TVM arena':>9} {'TVM live':>9} {'TVM inpl':>9}",
    f"  {'MiB':>9} {'bound':>9} {'bound':>9}",
)
SMALL_NOTE = (
    "TVM 0.27's figures were measured on the full-size models only: not comparable with the "
    "small variants' arenas, so not shown (run without --small to compare)."
)


def header(small: bool) -> str:
    """The table's two header lines; TVM's columns only for the full-size models."""
    return "\n".join(
        (ours if small else ours + tvm).rstrip()
        for ours, tvm in zip(_COLUMNS, _TVM_COLUMNS, strict=True)
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("names", nargs="*", help=f"models (default: all of {', '.join(ZOO)})")
    parser.add_argument("--small", action="store_true", help="the reduced variants")
    parser.add_argument("--targets", default="avx512,avx2")
    parser.add_argument("--details", action="store_true", help="print each plan's report")
    parser.add_argument("--svg", type=Path, help="write a picture of each plan to this folder")
    parser.add_argument("-d", "--dir", type=Path, default=MODELS_DIR)
    args = parser.parse_args(argv)
    rows: list[Row] = []
    for name in args.names or ZOO:
        module, _ = load(name, args.small, args.dir)
        for target in args.targets.split(","):
            for padding in (True, False):
                rows.append(
                    measure(
                        name + ("_small" if args.small else ""),
                        module,
                        target,
                        padding,
                        args.details,
                        args.svg,
                    )
                )
                if args.details:
                    print(format_row(rows[-1]), flush=True)
    table = header(args.small)
    print(table)
    print("-" * len(table.splitlines()[0]))
    for row in rows:
        print(format_row(row))
    if args.small:
        print(SMALL_NOTE)
    return 0 if all(r.ratio <= RATIO_GOAL for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
