"""float32 against bf16 (`default-pipeline{bf16=true}`) on zoo models, side by side in one run:
latency of the generated modules, speed-up, accuracy against float32, arena bytes.

    python -m nnlayout.benchmarks.bf16_latency                          # resnet50, 1 thread
    python -m nnlayout.benchmarks.bf16_latency resnet50 --inputs 20 --repeats 10 --markdown

For each model it compiles the float32 model twice with `default-pipeline{target=TARGET}`,
once as it is and once with `bf16=true` (convert-to-bf16 before select-dispatch), translates
both to numpy modules and loads them, then:

- latency: the median of `--repeats` runs of each, interleaved (one f32 run, one bf16 run)
  so that both see the same machine load, on one seeded input;
- accuracy on `--inputs` seeded standard-normal inputs: for each output, the largest
  relative difference of bf16's to float32's (|bf16 - f32| max over the largest |f32|, the
  worst input), outputs separated by " / " (the zoo's classifiers give logits, then their
  softmax, whose relative error is the logits' absolute error), and top-1 agreement (argmax
  of output 0);
- the arena bytes of each plan (bf16 buffers take 2 bytes an element), and how many ops run
  in bf16 (their kernels in the planned IR) and how many casts convert at the boundaries.

oneDNN fixes its OpenMP thread count when it loads: the measurements run in a subprocess of
this script with OMP_NUM_THREADS (and OpenBLAS's count) set to `--threads`. On a target or
machine without bf16 kernels the bf16 column says so (convert-to-bf16's remark) and equals
float32. Prints one table; the figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, ModuleOp

from nnlayout.benchmarks.layout_report import load
from nnlayout.benchmarks.startup import check_names, run_with_threads
from nnlayout.benchmarks.zoo_latency import figure, table, time_interleaved
from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.nn import CastOp
from nnlayout.examples.make_models import MODELS_DIR, ZOO
from nnlayout.ir.context import make_context
from nnlayout.lowering.to_numpy import import_generated, translate
from nnlayout.runtime.binding import relative_difference
from nnlayout.runtime.interpreter import argument_specs, find_entry
from nnlayout.tools.driver import description
from nnlayout.transforms import remarks
from nnlayout.transforms.default_pipeline import DefaultPipelinePass


@dataclass
class Row:
    model: str
    f32_ms: float
    bf16_ms: float
    worst_differences: list[float]  # per output
    top1_agreement: str
    f32_arena: int
    bf16_arena: int
    bf16_ops: int
    casts: int
    note: str


def compiled(module: ModuleOp, target: str, bf16: bool) -> tuple[ModuleOp, str]:
    """`module` through default-pipeline (with bf16 or not), and convert-to-bf16's remark
    when it left the function f32."""
    planned = module.clone()
    ctx = make_context()
    with remarks.collecting() as emitted:
        for one_pass in DefaultPipelinePass(target=target, bf16=bf16).passes():
            one_pass.apply(ctx, planned)
    notes = [r.message for r in emitted if r.pass_name == "convert-to-bf16"]
    return planned, next((n for n in notes if n.startswith("nothing")), "")


def bf16_census(planned: ModuleOp) -> tuple[int, int]:
    """(ops computing in bf16, casts) in the planned IR."""
    ops = [op.inner for op in planned.walk() if isinstance(op, ComputeOp)]
    casts = sum(isinstance(op, CastOp) for op in ops)
    bf16_ops = sum(
        not isinstance(op, CastOp)
        and any(isinstance(getattr(r.type, "element_type", None), BFloat16Type) for r in op.results)
        for op in ops
    )
    return bf16_ops, casts


def measure(name: str, args: argparse.Namespace) -> Row:
    module, source = load(name, False, args.dir)
    (f32_ir, _), (bf16_ir, note) = (compiled(module, args.target, b) for b in (False, True))
    scratch = tempfile.mkdtemp(prefix="nnlayout-bf16-")
    f32 = import_generated(translate(f32_ir, Path(scratch) / "f32.py", source_path=source).code)
    bf16 = import_generated(translate(bf16_ir, Path(scratch) / "bf16.py", source_path=source).code)
    specs = argument_specs(find_entry(module))
    worst: list[float] = []
    agree = 0
    for seed in range(args.inputs):
        rng = np.random.default_rng(seed)
        xs = [rng.standard_normal(s.shape).astype(s.dtype) for s in specs]
        want, got = f32.run(*xs), bf16.run(*xs)
        each = [relative_difference([w], [g]) for w, g in zip(want, got, strict=True)]
        worst = [max(pair) for pair in zip(worst or each, each, strict=True)]
        agree += int(np.argmax(want[0]) == np.argmax(got[0]))
    xs = [np.random.default_rng(0).standard_normal(s.shape).astype(s.dtype) for s in specs]
    f32_ms, bf16_ms = time_interleaved(lambda: f32.run(*xs), lambda: bf16.run(*xs), args.repeats)
    bf16_ops, casts = bf16_census(bf16_ir)
    return Row(
        name,
        f32_ms,
        bf16_ms,
        worst,
        f"{agree}/{args.inputs}",
        figure(f32_ir, "nnlayout.arena_bytes"),
        figure(bf16_ir, "nnlayout.arena_bytes"),
        bf16_ops,
        casts,
        note,
    )


def report(rows: Sequence[Row], args: argparse.Namespace) -> str:
    header = [
        "model",
        "f32 ms",
        "bf16 ms",
        "speed-up",
        "max rel diff",
        "top-1 agree",
        "f32 arena MB",
        "bf16 arena MB",
        "bf16 ops",
        "casts",
    ]
    cells = [
        [
            r.model,
            f"{r.f32_ms:.1f}",
            f"{r.bf16_ms:.1f}",
            f"{r.f32_ms / r.bf16_ms:.2f}x",
            " / ".join(f"{d:.1e}" for d in r.worst_differences),
            r.top1_agreement,
            f"{r.f32_arena / 1e6:.2f}",
            f"{r.bf16_arena / 1e6:.2f}",
            str(r.bf16_ops),
            str(r.casts),
        ]
        for r in rows
    ]
    title = (
        f"float32 vs bf16, target {args.target}, {args.threads} thread(s), "
        f"{args.repeats} interleaved runs, {args.inputs} seeded inputs"
    )
    notes = "".join(f"{r.model}: {r.note}\n" for r in rows if r.note)
    return table(title, header, cells, args.markdown) + notes


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument(
        "names", nargs="*", help=f"zoo models (default: resnet50; any of {', '.join(ZOO)})"
    )
    parser.add_argument("--target", default="host", help="the pipeline's target (default host)")
    parser.add_argument("--threads", type=int, default=1, help="OpenMP threads (default 1)")
    parser.add_argument(
        "--repeats", type=int, default=10, help="timed runs of each, interleaved (default 10)"
    )
    parser.add_argument(
        "--inputs", type=int, default=20, help="seeded inputs the accuracy is measured on"
    )
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    parser.add_argument(
        "-d", "--dir", type=Path, default=MODELS_DIR, help="where the zoo's models are written"
    )
    parser.add_argument("--worker", metavar="OUTPUT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.names = args.names or ["resnet50"]
    check_names(parser, args.names, ZOO)
    if args.worker:
        rows = [measure(name, args) for name in args.names]
        Path(args.worker).write_text(json.dumps([asdict(r) for r in rows]), encoding="utf-8")
        return 0
    with tempfile.TemporaryDirectory(prefix="nnlayout-bf16-") as scratch:
        output = Path(scratch) / "rows.json"
        start = time.perf_counter()
        worker = [*argv, "--worker", str(output)]
        run_with_threads("nnlayout.benchmarks.bf16_latency", worker, args.threads, check=True)
        rows = [Row(**r) for r in json.loads(output.read_text(encoding="utf-8"))]
    print(report(rows, args))
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
