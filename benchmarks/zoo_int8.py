"""The zoo quantized by onnxruntime's `quantize_static` (QDQ form, per-channel s8 weights, u8
activations, a seeded calibration set), compiled and run by nnlayout and by onnxruntime side by
side at one thread: latency, arenas and agreement with onnxruntime's int8 output.

    python -m nnlayout.benchmarks.zoo_int8                  # the five models, full size
    python -m nnlayout.benchmarks.zoo_int8 --small --inputs 10
    python -m nnlayout.benchmarks.zoo_int8 resnet50 --targets ref,avx512

Models: the zoo's ResNet-50, MobileNetV2, DenseNet-121 and UNet (`examples/make_models.py`,
seeded random weights) and torchvision's ResNet-18 (exported by torch's classic exporter, as
`torchvision_export` does, batch-norm statistics set from random batches; left out, with a
line saying why, where torch is not installed, and with `--small`, having no small variant).
Each float model is pre-processed by onnxruntime's `quant_pre_process` (batch norms folded into
the convolutions, as onnxruntime advises before quantizing) and quantized by `quantize_static`
on `--calibration` seeded standard-normal inputs (MinMax calibration).

Per model, one row: ours int8 ms (the generated module of `default-pipeline{target=...}`),
onnxruntime int8 ms (its CPU provider, one intra-op thread, no spinning), their ratio, ours f32
ms (the float model, same pipeline), our int8 speed-up over our f32, our arenas (int8, f32,
their ratio, and whether each is at the planner's lower bound), and agreement with
onnxruntime's int8 output on `--inputs` seeded inputs: the largest difference of any output in
units of its quantization step (the scale of the DequantizeLinear that makes it), and the
top-1 agreement of the first output (the class of a classifier, the class of each pixel of
UNet's mask). The three runs take turns within each of `--repeats` rounds on one input, each
timed alone; the figures are medians. With `--targets`, the int8 model is also compiled for
those targets (padding on and off) and its generated module run on the first input: the
largest difference from onnxruntime in output steps, per target.

oneDNN fixes its OpenMP thread count when it loads: unless OMP_NUM_THREADS is 1 already, the
script runs itself in a subprocess with one OpenMP/OpenBLAS thread. Exits 1 if an output is
more than one step from onnxruntime's or the top-1 agreement is under 99%. Run it as a fresh
process; on a shared machine say it was busy.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import numpy as np
import onnx
from onnx import numpy_helper
from xdsl.dialects.builtin import ModuleOp

from nnlayout.benchmarks.torchvision_export import DEFAULT_CACHE, export_cached, missing_packages
from nnlayout.benchmarks.zoo_latency import (
    figure,
    onnxruntime_session,
    table,
    thread_environment,
)
from nnlayout.examples.make_models import MODELS_DIR, write_model
from nnlayout.frontends.onnx import import_to_files
from nnlayout.lowering.to_numpy import import_generated, translate
from nnlayout.tools.driver import description, parse_pipeline, run_pipeline
from nnlayout.transforms import get_all_passes

MODELS = ["resnet50", "mobilenet_v2", "densenet121", "unet", "resnet18"]
TORCHVISION = "resnet18"
PIPELINE = "default-pipeline{{target={target} padding={padding}}}"
MIN_TOP1 = 0.99
STEP_SLACK = 1.001  # one step, and a float rounding's worth
MIB = 1 << 20


# ------------------------------------------------------------------ quantizing
def seeded_inputs(model: onnx.ModelProto, count: int, seed: int) -> Iterator[dict[str, np.ndarray]]:
    """`count` feeds of standard-normal float32 inputs for `model`'s graph inputs."""
    rng = np.random.default_rng(seed)
    initializers = {t.name for t in model.graph.initializer}
    shapes = {
        i.name: [d.dim_value for d in i.type.tensor_type.shape.dim]
        for i in model.graph.input
        if i.name not in initializers
    }
    for _ in range(count):
        yield {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}


def quantize(
    source: Path,
    target: Path,
    *,
    calibration: int = 8,
    seed: int = 1,
    preprocess: bool = True,
    qoperator: bool = False,
    signed_activations: bool = False,
    per_channel: bool = True,
) -> onnx.ModelProto:
    """The float model at `source` quantized by onnxruntime's `quantize_static` into `target`
    and returned: s8 weights (per output channel by default), u8 activations (s8 with
    `signed_activations`), MinMax-calibrated on `calibration` standard-normal inputs seeded
    with `seed`; QDQ form (QOperator with `qoperator`); with `preprocess`, after
    `quant_pre_process` (onnxruntime's optimizer folds batch norms into convolutions)."""
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quant_pre_process,
        quantize_static,
    )

    model = onnx.load(source)

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.feeds = seeded_inputs(model, calibration, seed)

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.feeds, None)

    logging.getLogger().setLevel(logging.ERROR)  # onnxruntime's advice to pre-process
    if preprocess:
        prepared = target.with_name(target.stem + ".prepared.onnx")
        quant_pre_process(str(source), str(prepared), skip_symbolic_shape=True)
        source = prepared
    quantize_static(
        str(source),
        str(target),
        Reader(),
        quant_format=QuantFormat.QOperator if qoperator else QuantFormat.QDQ,
        per_channel=per_channel,
        activation_type=QuantType.QInt8 if signed_activations else QuantType.QUInt8,
        weight_type=QuantType.QInt8,
    )
    return onnx.load(target)


def output_steps(model: onnx.ModelProto) -> list[float]:
    """One quantization step of each graph output: the scale of the DequantizeLinear (or
    QLinear op's output scale) that makes it; 0 for an output made in float."""
    constants = {t.name: t for t in model.graph.initializer}
    producers = {o: n for n in model.graph.node for o in n.output}
    steps = []
    for output in model.graph.output:
        node = producers.get(output.name)
        scale = node.input[1] if node is not None and node.op_type == "DequantizeLinear" else ""
        steps.append(
            float(numpy_helper.to_array(constants[scale]).reshape(()))
            if scale in constants
            else 0.0
        )
    return steps


# ------------------------------------------------------------------ comparing
def steps_apart(
    want: Sequence[np.ndarray], got: Sequence[np.ndarray], steps: Sequence[float]
) -> float:
    """The largest difference of any output, in units of its step (absolute where 0)."""
    worst = 0.0
    for w, g, step in zip(want, got, steps, strict=True):
        difference = float(np.abs(w.astype(np.float64) - g).max(initial=0.0))
        worst = max(worst, difference / step if step else difference)
    return worst


def top1_agreement(want: np.ndarray, got: np.ndarray) -> tuple[int, int]:
    """(agreeing, total) argmaxes along axis 1: one per image of a classifier's [N, classes],
    one per pixel of a segmentation's [N, classes, H, W]."""
    same = np.argmax(want, axis=1) == np.argmax(got, axis=1)
    return int(same.sum()), int(same.size)


# ------------------------------------------------------------------ compiling
@dataclass
class Compiled:
    generated: ModuleType
    arena_bytes: int
    bound_bytes: int

    @property
    def at_bound(self) -> bool:
        return self.arena_bytes <= self.bound_bytes


def compile_generated(module: ModuleOp, source: str, target: str, padding: bool = True) -> Compiled:
    """`module` (imported from `source`) through default-pipeline, translated and loaded."""
    planned = module.clone()
    spec = PIPELINE.format(target=target, padding=str(padding).lower())
    from nnlayout.ir.context import make_context

    run_pipeline(parse_pipeline(spec, get_all_passes()), make_context(), planned)
    with tempfile.TemporaryDirectory(prefix="nnlayout-int8-") as scratch:
        translation = translate(planned, Path(scratch) / "model.py", source_path=source)
        generated = import_generated(translation.code)
    return Compiled(
        generated,
        figure(planned, "nnlayout.arena_bytes"),
        figure(planned, "nnlayout.lower_bound_bytes"),
    )


# ------------------------------------------------------------------ one model
@dataclass
class Row:
    model: str
    ours_ms: float = 0.0
    ort_ms: float = 0.0
    f32_ms: float = 0.0
    arena: int = 0
    arena_f32: int = 0
    at_bound: bool = False
    f32_at_bound: bool = False
    steps: float = 0.0
    agreeing: int = 0
    total: int = 0
    inputs: int = 0
    targets: dict[str, float] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        within = all(s <= STEP_SLACK for s in (self.steps, *self.targets.values()))
        return within and self.agreeing >= MIN_TOP1 * self.total


def float_model(name: str, args: argparse.Namespace) -> Path | str:
    """The float .onnx of `name`, or why there is none."""
    if name != TORCHVISION:
        return write_model(name, args.small, args.dir)
    if args.small:
        return "no small variant (torchvision's full-size export); left out with --small"
    missing = missing_packages()
    if missing:
        return f"needs {', '.join(missing)} to export it (pip install -e '.[models]')"
    reason = export_cached(args.cache_dir, name, "classic", timeout=600)
    return reason or args.cache_dir / f"{name}-classic.onnx"


def time_in_turn(runs: Sequence[Callable[[], object]], repeats: int) -> list[float]:
    """The median milliseconds of each of `runs`, taking turns within each of `repeats`
    rounds so that all see the same machine load."""
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(repeats):
        for run, spent in zip(runs, times, strict=True):
            start = time.perf_counter()
            run()
            spent.append(time.perf_counter() - start)
    return [float(np.median(t)) * 1e3 for t in times]


def measure(name: str, source: Path, args: argparse.Namespace, folder: Path) -> Row:
    """Quantizes, compiles and runs model `name` (float .onnx at `source`)."""
    label = name + ("_small" if args.small else "")
    f32_path, int8_path = folder / f"{label}.f32.onnx", folder / f"{label}.int8.onnx"
    shutil.copyfile(source, f32_path)  # imported beside it, not where the model is kept
    quantized = quantize(f32_path, int8_path, calibration=args.calibration, seed=args.seed)
    f32 = compile_generated(
        import_to_files(f32_path), str(f32_path.with_suffix(".mlir")), args.target
    )
    int8_module = import_to_files(int8_path)
    int8_source = str(int8_path.with_suffix(".mlir"))
    int8 = compile_generated(int8_module, int8_source, args.target)
    session = onnxruntime_session(int8_path, 1)
    names = [i.name for i in session.get_inputs()]  # type: ignore[attr-defined]
    steps = output_steps(quantized)
    row = Row(label, arena=int8.arena_bytes, arena_f32=f32.arena_bytes)
    row.at_bound, row.f32_at_bound = int8.at_bound, f32.at_bound
    feeds = list(seeded_inputs(quantized, args.inputs, args.seed + 1))
    for feed in feeds:
        inputs = [feed[n] for n in names]
        want = session.run(None, feed)  # type: ignore[attr-defined]
        got = int8.generated.run(*inputs)
        row.steps = max(row.steps, steps_apart(want, got, steps))
        agreeing, total = top1_agreement(want[0], got[0])
        row.agreeing, row.total, row.inputs = row.agreeing + agreeing, row.total + total, len(feeds)
    inputs = [feeds[0][n] for n in names]
    row.ours_ms, row.ort_ms, row.f32_ms = time_in_turn(
        [
            lambda: int8.generated.run(*inputs),
            lambda: session.run(None, feeds[0]),  # type: ignore[attr-defined]
            lambda: f32.generated.run(*inputs),
        ],
        args.repeats,
    )
    want = session.run(None, feeds[0])  # type: ignore[attr-defined]
    for target in args.targets:
        for padding in (True, False):
            other = compile_generated(int8_module, int8_source, target, padding)
            got = other.generated.run(*inputs)
            key = f"{target}{'' if padding else ' nopad'}"
            row.targets[key] = steps_apart(want, got, steps)
            print(f"  {label} {key}: {row.targets[key]:.2f} steps", file=sys.stderr, flush=True)
    return row


# ------------------------------------------------------------------ the table
def report(rows: Sequence[Row], args: argparse.Namespace, markdown: bool) -> str:
    header = [
        "model",
        "ours int8 ms",
        "onnxruntime int8 ms",
        "ratio",
        "ours f32 ms",
        "speed-up over f32",
        "arena int8 MiB",
        "arena f32 MiB",
        "int8/f32",
        "at lower bound",
        "max diff (steps)",
        "top-1 agreement",
    ]
    if args.targets:
        header.append("targets (max steps, first input)")
    lines = []
    for r in rows:
        line = [
            r.model,
            f"{r.ours_ms:.1f}",
            f"{r.ort_ms:.1f}",
            f"{r.ours_ms / r.ort_ms:.2f}",
            f"{r.f32_ms:.1f}",
            f"{r.f32_ms / r.ours_ms:.2f}x",
            f"{r.arena / MIB:.2f}",
            f"{r.arena_f32 / MIB:.2f}",
            f"{r.arena / r.arena_f32:.3f}" if r.arena_f32 else "-",
            f"{'yes' if r.at_bound else 'NO'} / {'yes' if r.f32_at_bound else 'NO'}",
            f"{r.steps:.2f}",
            f"{100 * r.agreeing / max(r.total, 1):.2f}% of {r.total}",
        ]
        if args.targets:
            line.append(", ".join(f"{k} {v:.2f}" for k, v in r.targets.items()))
        lines.append(line)
    title = (
        f"int8 (QDQ, per-channel) against onnxruntime's int8, 1 thread, target "
        f"{args.target}: medians of {args.repeats} rounds; agreement on {args.inputs} seeded "
        "inputs (at lower bound: int8 / f32 arena)"
    )
    return table(title, header, lines, markdown)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("names", nargs="*", help=f"models (default: {', '.join(MODELS)})")
    parser.add_argument("--small", action="store_true", help="the zoo's reduced variants")
    parser.add_argument("--target", default="onednn", help="the timed target (default onednn)")
    parser.add_argument(
        "--targets",
        default="",
        help="comma-separated targets also checked (padding on and off) on the first input, "
        "e.g. ref,avx2,avx512,onednn,host",
    )
    parser.add_argument("--repeats", type=int, default=10, help="timed rounds (default 10)")
    parser.add_argument(
        "--inputs", type=int, default=100, help="seeded inputs compared (default 100)"
    )
    parser.add_argument(
        "--calibration", type=int, default=8, help="seeded calibration inputs (default 8)"
    )
    parser.add_argument("--seed", type=int, default=1, help="calibration seed; inputs: seed+1")
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    parser.add_argument(
        "-d", "--dir", type=Path, default=MODELS_DIR, help="where the float zoo models are built"
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(os.environ.get("NNLAYOUT_TORCHVISION_CACHE", DEFAULT_CACHE)),
        help=f"torchvision exports (default: $NNLAYOUT_TORCHVISION_CACHE or {DEFAULT_CACHE})",
    )
    args = parser.parse_args(argv)
    args.names = args.names or list(MODELS)
    args.targets = [t for t in args.targets.split(",") if t]
    unknown = [n for n in args.names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; choose from {', '.join(MODELS)}")
    if args.inputs < 1 or args.repeats < 1 or args.calibration < 1:
        parser.error("--inputs, --repeats and --calibration must be at least 1")
    if importlib.util.find_spec("onnxruntime") is None:
        parser.error("needs onnxruntime, which is not installed: pip install -e '.[test]'")
    if os.environ.get("OMP_NUM_THREADS") != "1":
        command = [sys.executable, "-m", "nnlayout.benchmarks.zoo_int8", *argv]
        return subprocess.run(command, env=thread_environment(1), check=False).returncode
    rows = []
    with tempfile.TemporaryDirectory(prefix="nnlayout-zoo-int8-") as scratch:
        for name in args.names:
            source = float_model(name, args)
            if isinstance(source, str):
                print(f"{name}: left out: {source}", flush=True)
                continue
            rows.append(row := measure(name, source, args, Path(scratch)))
            print(f"  {row.model}: done", file=sys.stderr, flush=True)
    if rows:
        print(report(rows, args, args.markdown))
    failed = [r.model for r in rows if not r.passed]
    if failed:
        print(f"MISMATCH: {', '.join(failed)} beyond one output step or under 99% top-1")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
