"""The zoo, compiled and run: compile time per pass, kernels and reorders, memory, and latency
of the generated module against onnxruntime, same inputs, same run.

    python -m nnlayout.benchmarks.zoo_latency                       # full-size zoo, 1 and 2 threads
    python -m nnlayout.benchmarks.zoo_latency --small --threads 1 --ref --markdown
    python -m nnlayout.benchmarks.zoo_latency resnet50 --ref resnet50 --ref-repeats 2

For each model and variant (`onednn`; `onednn-nnan`, the same with `nnan=true`, the fast-math
promise that lets oneDNN fuse relu and clip; `onednn-nchw8c` and `onednn-nchw8c-nnan`, target
`onednn-nchw8c`, oneDNN asked for blocked activations; `avx2`, our numpy kernels; `ref`, the
reference numpy kernels, only with `--ref`, on the models it names or on all, `--ref-repeats`
times) it
runs the passes of `default-pipeline` one by one, timing each, translates the planned IR to a
numpy module and loads it (parse, constants packed, oneDNN primitives created, that last part
also shown on its own; oneDNN's caches are emptied first so that each variant pays for its
own), then times runs of the generated
module and of onnxruntime interleaved on the same input and takes the medians. It prints one
table per section: compile times, kernels (activation reorders, ops per kernel, numpy
fallbacks, oneDNN's implementations with any `ref` one marked), memory (arena, lower bound,
TVM 0.27's arena from memory_report) and latency.

oneDNN fixes its OpenMP thread count when the library loads, so each thread count of
`--threads` runs in a subprocess of this script with OMP_NUM_THREADS (and OpenBLAS's count)
set, and onnxruntime gets the same intra-op thread count. No thread pool spins long while
another runs: oneDNN's OpenMP threads about 10 us (the binding's GOMP_SPINCOUNT=1000
default, unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set), OpenBLAS's shortest time
(OPENBLAS_THREAD_TIMEOUT=4 unless set), onnxruntime's not at all (allow_spinning=0): on a
2-core machine, interleaved, a pool spinning for long made the other's runs up to 100x
slower. The compile, kernel and memory tables come from the first
thread count's run. Exits 1 if a generated module's results differ from onnxruntime's by more
than 1e-4 of their largest magnitude.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, ModuleOp

from nnlayout.benchmarks.layout_report import load
from nnlayout.benchmarks.memory_report import TVM
from nnlayout.benchmarks.startup import check_names, run_with_threads
from nnlayout.examples.make_models import MODELS_DIR, ZOO
from nnlayout.frontends.onnx import import_to_files
from nnlayout.ir.context import make_context
from nnlayout.kernels.targets import get_target
from nnlayout.lowering.bufferize import activation_reorders
from nnlayout.lowering.to_numpy import import_generated, translate
from nnlayout.reports.census import kernel_census
from nnlayout.runtime.binding import relative_difference
from nnlayout.runtime.interpreter import find_entry
from nnlayout.tools.driver import description
from nnlayout.transforms.default_pipeline import DefaultPipelinePass

TOLERANCE = 1e-4
MIB = 1 << 20


@dataclass(frozen=True)
class Variant:
    target: str
    nnan: bool
    label: str


VARIANTS = {
    "onednn": Variant("onednn", False, "onednn"),
    "onednn-nnan": Variant("onednn", True, "onednn nnan=true (fast-math)"),
    "onednn-nchw8c": Variant("onednn-nchw8c", False, "onednn-nchw8c (blocked activations)"),
    "onednn-nchw8c-nnan": Variant("onednn-nchw8c", True, "onednn-nchw8c nnan=true"),
    "onednn-nchw16c": Variant("onednn-nchw16c", False, "onednn-nchw16c (blocked activations)"),
    "onednn-nchw16c-nnan": Variant("onednn-nchw16c", True, "onednn-nchw16c nnan=true"),
    "avx512": Variant("avx512", False, "avx512 (numpy)"),
    "avx2": Variant("avx2", False, "avx2 (numpy)"),
    "ref": Variant("ref", False, "ref (numpy)"),
}


@dataclass
class Result:
    """One model compiled for one variant and run at one thread count."""

    model: str
    variant: str
    threads: int
    passes: list[tuple[str, float]]
    translate_seconds: float
    load_seconds: float
    reorders: int
    kernels: dict[str, int]
    fallbacks: dict[str, int]
    implementations: dict[str, int]
    arena_bytes: int
    bound_bytes: int
    repeats: int
    creation_seconds: float = 0.0  # of load_seconds: creating oneDNN primitives
    ours_ms: float = 0.0
    ort_ms: float = 0.0
    difference: float = 0.0


# ------------------------------------------------------------------ what the compiler did
def figure(planned: ModuleOp, name: str) -> int:
    attribute = find_entry(planned).attributes.get(name)
    return attribute.value.data if isinstance(attribute, IntegerAttr) else 0


def primitive_creation_seconds() -> float:
    """Seconds this process has spent creating oneDNN primitives (0 before it loads oneDNN)."""
    if "nnlayout.kernels.onednn.primitives" not in sys.modules:
        return 0.0
    from nnlayout.kernels.onednn.primitives import CREATED

    return CREATED.seconds


def empty_onednn_caches() -> None:
    """Forgets oneDNN choices and primitives made for earlier variants (in this process),
    so that each variant's compile and load times are its own."""
    if "nnlayout.kernels.onednn.kernels" not in sys.modules:
        return
    from nnlayout.kernels.onednn import kernels as onednn_kernels

    onednn_kernels.forget_choices()


# ------------------------------------------------------------------ measuring (one process)
def measure(
    name: str,
    module: ModuleOp,
    source: str,
    variant: str,
    session: object,
    x: np.ndarray,
    threads: int,
    repeats: int,
) -> Result:
    """Compiles `module` for `variant` pass by pass, translates and loads it, and times it
    against the onnxruntime `session`, interleaved."""
    spec = VARIANTS[variant]
    empty_onednn_caches()
    planned = module.clone()
    ctx = make_context()
    passes = []
    for one_pass in DefaultPipelinePass(target=spec.target, nnan=spec.nnan).passes():
        start = time.perf_counter()
        one_pass.apply(ctx, planned)
        passes.append((one_pass.name, time.perf_counter() - start))
    feed = session.get_inputs()[0].name  # type: ignore[attr-defined]
    with tempfile.TemporaryDirectory(prefix="nnlayout-zoo-") as scratch:
        start = time.perf_counter()
        translation = translate(planned, Path(scratch) / "model.py", source_path=source)
        translate_seconds = time.perf_counter() - start
        created_before = primitive_creation_seconds()
        start = time.perf_counter()
        generated = import_generated(translation.code)
        load_seconds = time.perf_counter() - start
        creation_seconds = primitive_creation_seconds() - created_before
    census = kernel_census(planned, get_target(spec.target))
    result = Result(
        name,
        variant,
        threads,
        passes,
        translate_seconds,
        load_seconds,
        activation_reorders(planned),
        dict(census.kernels),
        dict(census.fallbacks),
        dict(census.implementations),
        figure(planned, "nnlayout.arena_bytes"),
        figure(planned, "nnlayout.lower_bound_bytes"),
        repeats,
        creation_seconds,
    )
    ours = generated.run(x)  # also the warm-up of both
    expected = session.run(None, {feed: x})  # type: ignore[attr-defined]
    result.difference = relative_difference(expected, ours)
    result.ours_ms, result.ort_ms = time_interleaved(
        lambda: generated.run(x),
        lambda: session.run(None, {feed: x}),  # type: ignore[attr-defined]
        repeats,
    )
    return result


def measure_model(name: str, model: object, x: np.ndarray, repeats: int) -> Result:
    """`measure` of an ONNX model built in memory (an `onnx.ModelProto`): saved and imported
    into a scratch folder, as `nnlayout-import` writes it, compiled for `onednn` and timed
    against onnxruntime, one thread each."""
    with tempfile.TemporaryDirectory(prefix="nnlayout-bench-") as scratch:
        path = Path(scratch) / "model.onnx"
        path.write_bytes(model.SerializeToString())  # type: ignore[attr-defined]
        module = import_to_files(path)
        session = onnxruntime_session(path, 1)
        source = str(path.with_suffix(".mlir"))
        return measure(name, module, source, "onednn", session, x.astype(np.float32), 1, repeats)


def verdict(worst: float) -> int:
    """A benchmark's exit status: 1, said in a line, where its largest difference from
    onnxruntime (relative) is above TOLERANCE; else 0."""
    if worst > TOLERANCE:
        print(f"MISMATCH: relative difference {worst:.1e} above {TOLERANCE:g}")
        return 1
    return 0


def time_interleaved(
    ours: Callable[[], object], theirs: Callable[[], object], repeats: int
) -> tuple[float, float]:
    """The median milliseconds of `repeats` runs of each, interleaved (one of ours, one of
    theirs) so that both see the same machine load."""
    ours_times, their_times = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        ours()
        ours_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        theirs()
        their_times.append(time.perf_counter() - start)
    return float(np.median(ours_times)) * 1e3, float(np.median(their_times)) * 1e3


def onnxruntime_session(onnx_path: Path, threads: int) -> object:
    """An onnxruntime CPU session on `threads` intra-op threads that never spin."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Interleaved on a few cores, a pool that spins after its run starves the other's.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])


def worker(args: argparse.Namespace) -> list[Result]:
    """Every model and variant at one thread count (OMP_NUM_THREADS, set by the parent)."""
    results = []
    for name in args.names:
        module, source = load(name, args.small, args.dir)
        onnx_path = Path(source).with_suffix(".onnx")
        session = onnxruntime_session(onnx_path, args.threads_now)
        shape = session.get_inputs()[0].shape
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        for variant in variants_of(name, args):
            repeats = args.ref_repeats if variant == "ref" else args.repeats
            result = measure(
                model_label(name, args.small),
                module,
                source,
                variant,
                session,
                x,
                args.threads_now,
                repeats,
            )
            print(
                f"  [{args.threads_now} thread(s)] {result.model} {variant}: "
                f"{result.ours_ms:.1f} ms vs onnxruntime {result.ort_ms:.1f} ms, "
                f"rel diff {result.difference:.1e}",
                file=sys.stderr,
                flush=True,
            )
            results.append(result)
    return results


def variants_of(name: str, args: argparse.Namespace) -> list[str]:
    chosen = args.variants.split(",")
    if args.ref is not None and (not args.ref or name in args.ref) and "ref" not in chosen:
        chosen.append("ref")
    return chosen


def model_label(name: str, small: bool) -> str:
    return name + ("_small" if small else "")


def run_threads(threads: int, argv: Sequence[str]) -> list[Result]:
    """This script in a subprocess with `threads` OpenMP/OpenBLAS threads."""
    with tempfile.TemporaryDirectory(prefix="nnlayout-zoo-") as scratch:
        output = Path(scratch) / "results.json"
        worker = [*argv, "--worker", str(threads), str(output)]
        run_with_threads("nnlayout.benchmarks.zoo_latency", worker, threads, check=True)
        return [
            Result(**{**r, "passes": [tuple(p) for p in r["passes"]]})
            for r in json.loads(output.read_text(encoding="utf-8"))
        ]


# ------------------------------------------------------------------ tables
_NUMBER = re.compile(r"^[-+]?[0-9.]+(e[-+]?[0-9]+)?x?$|^$")


def latency_cells(ours_ms: float, theirs_ms: float) -> list[str]:
    """Ours ms, theirs ms and ours / theirs, as the zoo's tables print them."""
    return [f"{ours_ms:.1f}", f"{theirs_ms:.1f}", f"{ours_ms / theirs_ms:.2f}"]


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool) -> str:
    """An aligned plain-text table (numbers right-aligned), or a Markdown one."""
    numeric = [all(_NUMBER.match(row[i]) for row in rows) for i in range(len(header))]
    if markdown:
        lines = [
            f"**{title}**",
            "",
            "| " + " | ".join(header) + " |",
            "|" + "|".join("---:" if n else "---" for n in numeric) + "|",
        ]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines) + "\n"
    widths = [max(len(header[i]), *(len(row[i]) for row in rows)) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if n else c.ljust(w) for c, w, n in zip(cells, widths, numeric, strict=True)
        ).rstrip()

    return (
        "\n".join(
            [title, line(header), "  ".join("-" * w for w in widths), *(line(row) for row in rows)]
        )
        + "\n"
    )


def counts(items: dict[str, int], mark_ref: bool = False) -> str:
    if not items:
        return "none"

    def slow(name: str) -> bool:  # oneDNN's reference code, or numpy in its place
        return name.startswith(("ref", "numpy")) or "+ref" in name

    return ", ".join(
        f"{'REF ' if mark_ref and slow(k) else ''}{k} x{v}"
        for k, v in sorted(items.items(), key=lambda kv: (-kv[1], kv[0]))
    )


def report(results: Sequence[Result], threads: Sequence[int], markdown: bool) -> str:
    first = [r for r in results if r.threads == threads[0]]
    pass_names = [name for name, _ in first[0].passes]
    compile_rows = [
        [
            r.model,
            VARIANTS[r.variant].label,
            *(f"{s:.2f}" for _, s in r.passes),
            f"{sum(s for _, s in r.passes):.2f}",
            f"{r.translate_seconds:.2f}",
            f"{r.load_seconds:.2f}",
            f"{r.creation_seconds:.2f}",
        ]
        for r in first
    ]
    kernel_rows = [
        [
            r.model,
            VARIANTS[r.variant].label,
            str(r.reorders),
            str(sum(r.kernels.values())),
            counts(r.kernels),
            counts(r.fallbacks),
            counts(r.implementations, mark_ref=True) if r.implementations else "-",
        ]
        for r in first
    ]
    memory_rows = []
    for r in first:
        tvm = TVM.get(r.model.removesuffix("_small"))
        memory_rows.append(
            [
                r.model,
                VARIANTS[r.variant].label,
                f"{r.arena_bytes / MIB:.2f}",
                f"{r.bound_bytes / MIB:.2f}",
                f"{r.arena_bytes / r.bound_bytes:.3f}" if r.bound_bytes else "-",
                f"{tvm[0]:.2f}" if tvm and not r.model.endswith("_small") else "-",
            ]
        )
    latency_rows = []
    for r in first:
        row = [r.model, VARIANTS[r.variant].label]
        same = [s for s in results if (s.model, s.variant) == (r.model, r.variant)]
        for t in threads:
            at = next((s for s in same if s.threads == t), None)
            row += (
                [f"{at.ours_ms:.1f}", f"{at.ort_ms:.1f}", f"{at.ours_ms / at.ort_ms:.2f}"]
                if at
                else ["-", "-", "-"]
            )
        row += [f"{max(s.difference for s in same):.1e}", str(r.repeats)]
        latency_rows.append(row)
    latency_header = ["model", "variant"]
    for t in threads:
        unit = f"{t} thread{'s' if t > 1 else ''}"
        latency_header += [f"ours ms ({unit})", f"onnxruntime ms ({unit})", f"ratio ({unit})"]
    latency_header += ["max rel diff", "repeats"]
    return "\n".join(
        [
            table(
                f"Compile time, seconds ({threads[0]} thread run; load = parse + constants "
                "packed + oneDNN primitives created, the last shown on its own)",
                ["model", "variant", *pass_names, "total", "translate", "load", "primitives"],
                compile_rows,
                markdown,
            ),
            table(
                "Kernels (reorders: activation reorders per inference)",
                [
                    "model",
                    "variant",
                    "reorders",
                    "ops",
                    "ops per kernel",
                    "numpy fallbacks",
                    "oneDNN implementations",
                ],
                kernel_rows,
                markdown,
            ),
            table(
                "Memory, MiB (TVM 0.27 Relax arena from memory_report, plain float32)",
                ["model", "variant", "arena", "lower bound", "arena/bound", "TVM arena"],
                memory_rows,
                markdown,
            ),
            table(
                "Latency, medians of interleaved runs on the same input; ratio = ours / "
                "onnxruntime; nnan=true promises no NaN reaches an activation (fast-math: "
                "relu and clip fused into oneDNN's convolutions)",
                latency_header,
                latency_rows,
                markdown,
            ),
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("names", nargs="*", help=f"models (default: all of {', '.join(ZOO)})")
    parser.add_argument("--small", action="store_true", help="the reduced variants")
    parser.add_argument(
        "--variants",
        default="onednn,onednn-nnan,onednn-nchw8c,onednn-nchw8c-nnan,avx2",
        help=f"comma-separated, of {', '.join(VARIANTS)}",
    )
    parser.add_argument(
        "--ref",
        nargs="*",
        metavar="MODEL",
        help="also the ref variant (slow): on these models, or all if none",
    )
    parser.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--ref-repeats", type=int, default=3)
    parser.add_argument("--markdown", action="store_true", help="Markdown tables")
    parser.add_argument("-d", "--dir", type=Path, default=MODELS_DIR)
    parser.add_argument("--worker", nargs=2, metavar=("THREADS", "OUTPUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.names = args.names or list(ZOO)
    unknown = [v for v in args.variants.split(",") if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    check_names(parser, args.names + (args.ref or []), ZOO)
    if importlib.util.find_spec("onnxruntime") is None:
        parser.error(
            "the latencies are measured against onnxruntime, which is not installed: "
            "pip install -e '.[test]'"
        )
    if args.worker:
        args.threads_now = int(args.worker[0])
        results = worker(args)
        Path(args.worker[1]).write_text(json.dumps([asdict(r) for r in results]), encoding="utf-8")
        return 0
    threads = [int(t) for t in args.threads.split(",")]
    results = [r for t in threads for r in run_threads(t, argv)]
    print(report(results, threads, args.markdown))
    return verdict(max(r.difference for r in results))


if __name__ == "__main__":
    raise SystemExit(main())
