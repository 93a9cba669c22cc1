"""torchvision's models quantized by onnxruntime's `quantize_dynamic` (s8 weights per tensor,
activations quantized at run time: DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul, the
form onnxruntime recommends for transformers), compiled and run by nnlayout and by
onnxruntime side by side at one thread.

    pip install -e '.[models]'       # torch and torchvision, to export the models
    python -m nnlayout.benchmarks.zoo_dynamic                       # vit_b_16, swin_t
    python -m nnlayout.benchmarks.zoo_dynamic vit_b_16 --repeats 10 --markdown

Each model is torchvision's, exported by torch's classic exporter as `torchvision_export`
does (cached there), then quantized by `quantize_dynamic` (its defaults: MatMul and the
other operators it quantizes, s8 weights per tensor). Per model, one row: ours ms (the
generated module of `default-pipeline{target=...}`), onnxruntime's ms on the quantized
model, their ratio, ours f32 ms (the float export, same pipeline), our speed-up over it, our
arena and whether it is at the planner's lower bound, and agreement on `--inputs` seeded
inputs: the largest difference of the output from onnxruntime's, over the largest |output|
("from onnxruntime"), beside onnxruntime's own spread (its unoptimised session, the ops as
written, against its optimised one, fused kernels): quantizing activations at run time puts
a value within float rounding of a half step on either side, and the next layers grow that
step, so two correct implementations differ by about as much as onnxruntime differs from
itself. Top-1 agreement of the classes with onnxruntime's. The three timed runs take turns
in each of `--repeats` rounds on one input, after `--warmup` untimed rounds; the figures
are medians.

Exits 1 if a model's difference from onnxruntime is more than twice onnxruntime's own
spread. Like `zoo_int8`, it runs itself with one OpenMP thread unless OMP_NUM_THREADS is 1.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nnlayout.benchmarks.startup import check_names, run_with_threads
from nnlayout.benchmarks.torchvision_export import DEFAULT_CACHE, missing_packages
from nnlayout.benchmarks.torchvision_export import MODELS as TORCHVISION_MODELS
from nnlayout.benchmarks.torchvision_zoo import imported
from nnlayout.benchmarks.zoo_int8 import (
    MIB,
    compile_generated,
    export_torchvision,
    time_in_turn,
    top1_agreement,
)
from nnlayout.benchmarks.zoo_latency import onnxruntime_session, table

MODELS = ["vit_b_16", "swin_t"]
SPREAD_SLACK = 2.0


@dataclass
class Row:
    model: str
    ours_ms: float
    ort_ms: float
    f32_ms: float
    arena: int
    at_bound: bool
    difference: float  # from onnxruntime's output, over its largest |value|
    spread: float  # onnxruntime's unoptimised session from its optimised one, likewise
    agreeing: int
    total: int

    @property
    def passed(self) -> bool:
        return self.difference <= SPREAD_SLACK * max(self.spread, 1e-6)


def quantized(source: Path, folder: Path) -> Path:
    """`source` quantized by onnxruntime's `quantize_dynamic` into `folder`."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    target = folder / f"{source.stem}-dynamic.onnx"
    logging.getLogger().setLevel(logging.ERROR)  # its advice to pre-process the model
    quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8)
    return target


def _relative(want: np.ndarray, got: np.ndarray) -> float:
    return float(np.abs(got - want).max() / max(float(np.abs(want).max()), 1e-30))


def measure(name: str, source: Path, args: argparse.Namespace, folder: Path) -> Row:
    import onnxruntime

    dynamic = quantized(source, folder)
    session = onnxruntime_session(dynamic, 1)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    unoptimised = onnxruntime.InferenceSession(
        str(dynamic), options, providers=["CPUExecutionProvider"]
    )
    module, mlir = imported(dynamic, folder)
    ours = compile_generated(module, mlir, args.target)
    f32_module, f32_mlir = imported(source, folder)
    f32 = compile_generated(f32_module, f32_mlir, args.target)
    feed = session.get_inputs()[0]
    rng = np.random.default_rng(args.seed)
    inputs = [rng.standard_normal(feed.shape).astype(np.float32) for _ in range(args.inputs)]
    difference = spread = 0.0
    agreeing = total = 0
    for x in inputs:
        want, got = session.run(None, {feed.name: x})[0], ours.generated.run(x)[0]
        difference = max(difference, _relative(want, got))
        spread = max(spread, _relative(want, unoptimised.run(None, {feed.name: x})[0]))
        agree, count = top1_agreement(want, got)
        agreeing, total = agreeing + agree, total + count
    x = inputs[0]
    ours_ms, ort_ms, f32_ms = time_in_turn(
        [
            lambda: ours.generated.run(x),
            lambda: session.run(None, {feed.name: x}),
            lambda: f32.generated.run(x),
        ],
        args.repeats,
        args.warmup,
    )
    return Row(
        name,
        ours_ms,
        ort_ms,
        f32_ms,
        ours.arena_bytes,
        ours.at_bound,
        difference,
        spread,
        agreeing,
        total,
    )


def report(rows: Sequence[Row], args: argparse.Namespace) -> str:
    header = [
        "model",
        "ours ms",
        "onnxruntime ms",
        "ratio",
        "ours f32 ms",
        "speed-up over f32",
        "arena MiB",
        "at lower bound",
        "from onnxruntime",
        "onnxruntime's own spread",
        "top-1 agreement",
    ]
    cells = [
        [
            r.model,
            f"{r.ours_ms:.1f}",
            f"{r.ort_ms:.1f}",
            f"{r.ours_ms / r.ort_ms:.2f}",
            f"{r.f32_ms:.1f}",
            f"{r.f32_ms / r.ours_ms:.2f}x",
            f"{r.arena / MIB:.2f}",
            "yes" if r.at_bound else "no",
            f"{r.difference:.1e}",
            f"{r.spread:.1e}",
            f"{r.agreeing} of {r.total}",
        ]
        for r in rows
    ]
    title = (
        f"quantize_dynamic (s8 weights) against onnxruntime, 1 thread, target {args.target}: "
        f"medians of {args.repeats} rounds after {args.warmup} untimed; agreement on "
        f"{args.inputs} seeded inputs"
    )
    return table(title, header, cells, args.markdown)


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m nnlayout.benchmarks.zoo_dynamic",
        description="torchvision models quantized by quantize_dynamic: ours against "
        "onnxruntime at one thread (latency, arena, agreement).",
    )
    parser.add_argument("names", nargs="*", help=f"models (default: {' '.join(MODELS)})")
    parser.add_argument("--target", default="host", help="the timed target (default host)")
    parser.add_argument("--repeats", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument(
        "--warmup", type=int, default=2, help="untimed rounds before them (default 2)"
    )
    parser.add_argument("--inputs", type=int, default=2, help="seeded inputs (default 2)")
    parser.add_argument("--seed", type=int, default=1, help="the inputs' seed (default 1)")
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(os.environ.get("NNLAYOUT_TORCHVISION_CACHE", DEFAULT_CACHE)),
        help="torchvision_export's cache of exports",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = make_parser()
    args = parser.parse_args(argv)
    args.names = args.names or list(MODELS)
    check_names(parser, args.names, TORCHVISION_MODELS)
    if args.inputs < 1 or args.repeats < 1 or args.warmup < 0:
        parser.error("--inputs and --repeats must be at least 1, --warmup at least 0")
    missing = missing_packages()
    if missing:
        parser.error(f"needs {', '.join(missing)} to export the models: pip install -e '.[models]'")
    if os.environ.get("OMP_NUM_THREADS") != "1":
        return run_with_threads("nnlayout.benchmarks.zoo_dynamic", argv, 1).returncode
    rows = []
    with tempfile.TemporaryDirectory(prefix="nnlayout-zoo-dynamic-") as scratch:
        for name in args.names:
            source = export_torchvision(name, args.cache_dir)
            if isinstance(source, str):
                print(f"{name}: left out: {source}", flush=True)
                continue
            rows.append(row := measure(name, source, args, Path(scratch)))
            print(f"  {row.model}: done", file=sys.stderr, flush=True)
    if rows:
        print(report(rows, args))
    failed = [r.model for r in rows if not r.passed]
    if failed:
        print(f"MISMATCH: {', '.join(failed)} further from onnxruntime than twice its own spread")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
