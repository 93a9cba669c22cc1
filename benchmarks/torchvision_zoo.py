"""torchvision's models as users export them, through nnlayout and onnxruntime, at 1 thread.

    python -m nnlayout.benchmarks.torchvision_zoo                       # every model, both
    python -m nnlayout.benchmarks.torchvision_zoo --models resnet18,mobilenet_v2 --exporters dynamo
    python -m nnlayout.benchmarks.torchvision_zoo --check-targets ref,avx2,avx512,onednn,host
    python -m nnlayout.benchmarks.torchvision_zoo --models fcn_resnet50 --exact --check-targets ref

For each model and exporter (see benchmarks/torchvision_export.py: weights=None, seeded,
batch-norm running statistics set from a few random batches first, because a freshly
initialised torchvision model collapses its outputs in eval mode and a comparison on them
would prove nothing, and for the same reason a Linear/Conv weight left all zeros, as ViT's
head is, given random values; eval mode, batch 1, 224x224; the video classifiers one clip),
the .onnx file comes from the cache (exported first if it is not there, which needs torch,
torchvision and onnxscript:
`pip install -e '.[models]'`). It is imported (a model the importer refuses shows its
one-line refusal instead of numbers), compiled with `default-pipeline{target=...}` for each
of `--targets`, translated to the generated numpy module, and run, as onnxruntime is, on the
same seeded input; both are then timed, interleaved, `--repeats` times, and the medians shown.

Columns: imported (yes, or the refusal), ops (kernels in the compiled program), max rel diff
(the largest difference from onnxruntime relative to the output's largest magnitude, over the
timed target and every `--check-targets` target with padding on and off; "vacuous" instead
when onnxruntime gives the same output for two different seeded inputs, so that the output
does not depend on the input and a comparison on it would prove nothing), reorders (activation
reorders per inference), fallbacks (numpy kernels run where the target has a faster family),
arena/bound (the planned arena over its lower bound), ours ms, onnxruntime ms, ratio; with
`--check-targets`, also onnxruntime spread (onnxruntime with its graph optimisations off
against the same session with them on, by the same measure: how far two float32 evaluations
of the model by one runtime differ, the noise floor against which a difference is judged) and
worst at (the target and padding of the largest difference). With `--exact`, every result is
also compared, by the same measure, with the model evaluated in float64
(benchmarks/float64_reference.py: the export's float32 weights and input taken exactly, every
operation in float64), which tells whose float32 rounding a difference from onnxruntime is:
columns ours vs float64 (the worst of the configurations, each listed on stderr), onnxruntime
vs float64 and onnxruntime unoptimised vs float64 (graph optimisations off); "n/a" where the
float64 evaluation failed (the reason on stderr).

Everything runs at 1 thread: onnxruntime with intra_op_num_threads=1 (and no spinning), and
oneDNN with OMP_NUM_THREADS=1, for which this script runs itself again in a child process (as
benchmarks/zoo_latency.py does). Exits 1 if a result differs from onnxruntime's by more than
1e-4 relative; 2 on bad arguments or a missing package.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from nnlayout.benchmarks.float64_reference import float64_outputs
from nnlayout.benchmarks.startup import run_with_threads
from nnlayout.benchmarks.torchvision_export import (
    TIMEOUT_SECONDS,
    add_common_arguments,
    chosen,
    error_path,
    export_cached,
    missing_packages,
    onnx_path,
    require,
)
from nnlayout.benchmarks.zoo_int8 import unoptimised_session
from nnlayout.benchmarks.zoo_latency import (
    figure,
    latency_cells,
    onnxruntime_session,
    table,
    time_interleaved,
    verdict,
)
from nnlayout.diagnostics import UserError
from nnlayout.frontends.onnx import import_model, load_model, write_imported
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.kernels.targets import TARGETS, get_target
from nnlayout.lowering.bufferize import activation_reorders
from nnlayout.lowering.to_numpy import generated_module
from nnlayout.reports.census import kernel_census
from nnlayout.runtime.binding import relative_difference
from nnlayout.tools.driver import parse_pipeline, run_pipeline
from nnlayout.transforms import get_all_passes

PIPELINE = "default-pipeline{{target={target} padding={padding}}}"
REFUSAL_WIDTH = 90
THREADS = 1
KNOWN_TARGETS = [*TARGETS, "host"]


@dataclass
class Row:
    """One model from one exporter, compiled for one target."""

    model: str
    exporter: str
    target: str
    refusal: str = ""  # why it was not exported or imported; empty if it was
    ops: int = 0
    difference: float = 0.0
    worst: str = ""  # the target and padding of the largest difference
    reorders: int = 0
    fallbacks: int = 0
    arena_bytes: int = 0
    bound_bytes: int = 0
    ours_ms: float = 0.0
    ort_ms: float = 0.0
    checks: dict[str, float] = field(default_factory=dict)
    spread: float = 0.0  # onnxruntime unoptimised against optimised, the same measure
    vacuous: bool = False  # the output does not depend on the input
    exact: dict[str, float] = field(default_factory=dict)  # each of `checks`, against float64
    ort_exact: float | None = None  # onnxruntime (optimised) against float64, if computed
    plain_exact: float | None = None  # onnxruntime unoptimised against float64


def compiled(module: ModuleOp, target: str, padding: bool) -> ModuleOp:
    planned = module.clone()
    spec = PIPELINE.format(target=target, padding=str(padding).lower())
    run_pipeline(parse_pipeline(spec, get_all_passes()), make_context(), planned)
    return planned


def imported(path: Path, scratch: Path) -> tuple[ModuleOp, str]:
    """The model at `path` imported into `scratch` (.mlir and .npz) and parsed back, as
    `nnlayout-import` writes it and every tool reads it; and the .mlir's path."""
    mlir = scratch / path.with_suffix(".mlir").name
    write_imported(import_model(load_model(path)), mlir)
    return parse_module(make_context(), mlir.read_text(encoding="utf-8"), str(mlir)), str(mlir)


@dataclass
class References:
    """What a configuration's outputs are compared with: onnxruntime's, and the float64
    evaluation's where `--exact` asked for it and it could be computed."""

    expected: Sequence[np.ndarray]
    exact: Sequence[np.ndarray] | None = None

    def record(self, row: Row, where: str, outputs: Sequence[np.ndarray]) -> None:
        row.checks[where] = relative_difference(self.expected, outputs)
        if self.exact is not None:
            row.exact[where] = relative_difference(self.exact, outputs)


def check(
    module: ModuleOp, source: str, x: np.ndarray, refs: References, row: Row, targets: Sequence[str]
) -> None:
    """The generated module's difference from onnxruntime (and from float64) on each target,
    padding on and off, into `row.checks` (and `row.exact`)."""
    for target in targets:
        for padding in (True, False):
            planned = compiled(module, target, padding)
            with generated_module(planned, source_path=source) as generated:
                where = f"{target} padding={'on' if padding else 'off'}"
                refs.record(row, where, generated.run(x))


def exact_reference(
    path: Path, name: str, x: np.ndarray, outputs: Sequence[Sequence[np.ndarray]]
) -> tuple[Sequence[np.ndarray] | None, list[float | None]]:
    """The float64 evaluation of the model at `path` on `x` (fed as input `name`), and each
    of `outputs`' difference from it; None for all where it cannot be computed."""
    try:
        exact = float64_outputs(path, {name: x})
    except Exception as error:  # noqa: BLE001 - an operator onnx's reference lacks, shown
        print(f"  float64 reference of {path.name}: n/a ({error})", file=sys.stderr, flush=True)
        return None, [None] * len(outputs)
    return exact, [relative_difference(exact, out) for out in outputs]


def measure(
    path: Path, model: str, exporter: str, targets: Sequence[str], args: argparse.Namespace
) -> list[Row]:
    """`model`'s rows, one per target (each the refusal, if it is not imported)."""
    with tempfile.TemporaryDirectory(prefix="nnlayout-torchvision-") as scratch:
        try:
            module, source = imported(path, Path(scratch))
        except UserError as error:
            return [Row(model, exporter, t, refusal=error.message) for t in targets]
        session = onnxruntime_session(path, THREADS)
        feed = session.get_inputs()[0]  # type: ignore[attr-defined]
        x = np.random.default_rng(0).standard_normal(feed.shape).astype(np.float32)
        expected = session.run(None, {feed.name: x})  # type: ignore[attr-defined]
        other = np.random.default_rng(1).standard_normal(feed.shape).astype(np.float32)
        again = session.run(None, {feed.name: other})  # type: ignore[attr-defined]
        vacuous = all(np.array_equal(a, b) for a, b in zip(expected, again, strict=True))
        spread, refs, versus = 0.0, References(expected), [None, None]
        if args.check_targets or args.exact:  # the noise floor the figures are judged against
            plain = unoptimised_session(path).run(None, {feed.name: x})  # type: ignore[attr-defined]
            spread = relative_difference(expected, plain)
            if args.exact:
                refs.exact, versus = exact_reference(path, feed.name, x, [expected, plain])
        rows = []
        for target in targets:
            row = Row(model, exporter, target, vacuous=vacuous, spread=spread)
            row.ort_exact, row.plain_exact = versus
            try:
                check(module, source, x, refs, row, args.check_targets)
                timed(module, source, x, refs, row, args.repeats, session)
            except Exception as error:  # noqa: BLE001 - a compiler bug, shown in its row
                row.refusal = f"FAILED ({type(error).__name__}): {error}"
            rows.append(row)
        return rows


def timed(
    module: ModuleOp,
    source: str,
    x: np.ndarray,
    refs: References,
    row: Row,
    repeats: int,
    session: object,
) -> None:
    """`row.target`'s figures: what the compiler did, the difference, and the latencies."""
    planned = compiled(module, row.target, True)
    census = kernel_census(planned, get_target(row.target))
    row.ops = sum(census.kernels.values())
    row.fallbacks = sum(census.fallbacks.values())
    row.reorders = activation_reorders(planned)
    row.arena_bytes = figure(planned, "nnlayout.arena_bytes")
    row.bound_bytes = figure(planned, "nnlayout.lower_bound_bytes")
    feed = session.get_inputs()[0].name  # type: ignore[attr-defined]
    with generated_module(planned, source_path=source) as generated:
        refs.record(row, f"{row.target} padding=on", generated.run(x))
        row.ours_ms, row.ort_ms = time_interleaved(
            lambda: generated.run(x),
            lambda: session.run(None, {feed: x}),  # type: ignore[attr-defined]
            repeats,
        )
    row.worst, row.difference = max(row.checks.items(), key=lambda item: item[1])


def refusal_cell(refusal: str, markdown: bool) -> str:
    text = " ".join(refusal.split("; nnlayout imports")[0].split())
    if len(text) > REFUSAL_WIDTH:
        text = text[: REFUSAL_WIDTH - 3] + "..."
    return "no: " + (text.replace("|", "\\|") if markdown else text)


EXACT_COLUMNS = ["ours vs float64", "onnxruntime vs float64", "unoptimised vs float64"]


def exact_cells(row: Row) -> list[str]:
    """The --exact columns: ours (the worst configuration), onnxruntime, onnxruntime unoptimised
    against the float64 evaluation, or n/a."""
    ours = max(row.exact.values()) if row.exact else None
    return [f"{v:.2e}" if v is not None else "n/a" for v in (ours, row.ort_exact, row.plain_exact)]


def report(rows: Sequence[Row], args: argparse.Namespace) -> str:
    several = len(args.targets) > 1
    header = ["model", "exporter", *(["target"] if several else []), "imported", "ops"]
    header += ["max rel diff", "reorders", "fallbacks", "arena/bound", "ours ms"]
    header += ["onnxruntime ms", "ratio"]
    header += ["onnxruntime spread", "worst at"] if args.check_targets else []
    header += EXACT_COLUMNS if args.exact else []
    lines = []
    for r in rows:
        line = [r.model, r.exporter, *([r.target] if several else [])]
        if r.refusal:
            line += [refusal_cell(r.refusal, args.markdown)] + [""] * (len(header) - len(line) - 1)
        else:
            line += [
                "yes",
                str(r.ops),
                "vacuous" if r.vacuous else f"{r.difference:.1e}",
                str(r.reorders),
                str(r.fallbacks),
                f"{r.arena_bytes / r.bound_bytes:.3f}" if r.bound_bytes else "",
                *latency_cells(r.ours_ms, r.ort_ms),
                *([f"{r.spread:.1e}", r.worst] if args.check_targets else []),
                *(exact_cells(r) if args.exact else []),
            ]
        lines.append(line)
    checked = f", also checked on {','.join(args.check_targets)} (padding on and off)"
    title = (
        f"torchvision zoo, {THREADS} thread, target {','.join(args.targets)}"
        f"{checked if args.check_targets else ''}; medians of {args.repeats} interleaved runs; "
        "ratio = ours / onnxruntime"
    )
    return table(title, header, lines, args.markdown)


def arguments(argv: Sequence[str]) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_common_arguments(parser)
    parser.add_argument(
        "--targets",
        default="host",
        help=f"comma-separated targets to time, of {', '.join(KNOWN_TARGETS)} (default: host)",
    )
    parser.add_argument(
        "--check-targets",
        default="",
        help="comma-separated targets whose results are also compared with onnxruntime, "
        "padding on and off, without timing (e.g. ref,avx2,avx512,onednn,host)",
    )
    parser.add_argument(
        "--exact",
        action="store_true",
        help="also compare every result, onnxruntime's included, with the model evaluated in "
        "float64 (benchmarks/float64_reference.py): whose rounding a difference is",
    )
    parser.add_argument("--repeats", type=int, default=10, help="timed runs of each (default 10)")
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    parser.add_argument(
        "--export-timeout",
        type=float,
        default=TIMEOUT_SECONDS,
        help=f"seconds an export may take (default {TIMEOUT_SECONDS})",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.pairs = chosen(parser, args)
    args.targets = args.targets.split(",")
    args.check_targets = [t for t in args.check_targets.split(",") if t]
    unknown = [t for t in args.targets + args.check_targets if t not in KNOWN_TARGETS]
    if unknown:
        parser.error(f"unknown target: {', '.join(unknown)}")
    return parser, args


def exact_status(row: Row) -> str:
    if row.ort_exact is None or row.plain_exact is None:
        return ""
    return f"; against float64: onnxruntime {row.ort_exact:.2e}, unoptimised {row.plain_exact:.2e}"


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser, args = arguments(argv)
    onnxruntime = [] if importlib.util.find_spec("onnxruntime") else ["onnxruntime"]
    require(parser, onnxruntime, "comparing with onnxruntime", "test")
    unexported = [
        pair
        for pair in args.pairs
        if not onnx_path(args.cache_dir, *pair).is_file()
        and not error_path(args.cache_dir, *pair).is_file()
    ]
    if unexported:
        require(parser, missing_packages(), f"exporting {unexported[0][0]}", "models")
    if not args.child:  # oneDNN fixes its thread count when it loads: 1 thread, in a child
        child = [*argv, "--child"]
        return run_with_threads("nnlayout.benchmarks.torchvision_zoo", child, THREADS).returncode
    rows: list[Row] = []
    for model, exporter in args.pairs:
        reason = export_cached(args.cache_dir, model, exporter, args.export_timeout)
        path = onnx_path(args.cache_dir, model, exporter)
        if reason is not None:
            rows += [Row(model, exporter, t, refusal=reason) for t in args.targets]
        else:
            rows += measure(path, model, exporter, args.targets, args)
        for r in rows[-len(args.targets) :]:
            status = r.refusal.split("; nnlayout imports")[0] or (
                f"{r.ours_ms:.1f} ms vs {r.ort_ms:.1f} ms, rel diff {r.difference:.1e}"
                + (
                    f", onnxruntime unoptimised vs optimised {r.spread:.1e}"
                    if args.check_targets
                    else ""
                )
                + (" (vacuous: the output does not depend on the input)" if r.vacuous else "")
                + exact_status(r)
            )
            print(f"  {model} {exporter} {r.target}: {status}", file=sys.stderr, flush=True)
            for where, difference in r.checks.items():  # every configuration, not only the worst
                exact = f" (float64: {r.exact[where]:.2e})" if where in r.exact else ""
                print(f"    {where}: {difference:.1e}{exact}", file=sys.stderr, flush=True)
    print(report(rows, args))
    return verdict(max((r.difference for r in rows), default=0.0))


if __name__ == "__main__":
    raise SystemExit(main())
