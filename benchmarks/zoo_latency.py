"""Latency of the generated module against onnxruntime on the model zoo, same inputs, same run.

    OMP_NUM_THREADS=1 python -m nnlayout.benchmarks.zoo_latency --threads 1
    OMP_NUM_THREADS=2 python -m nnlayout.benchmarks.zoo_latency --threads 2 resnet50

For each model and target: compile (`default-pipeline`), translate to a numpy module, load it
(constants packed, oneDNN primitives created), then time runs of the generated module and of
onnxruntime interleaved, and print the medians and their ratio, with the compile, translate
and load times. oneDNN's thread count is set by OMP_NUM_THREADS when the library loads, so
set it to the same number as --threads. Exits 1 if a generated module's results differ from
onnxruntime's by more than 1e-4 of their largest magnitude.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnxruntime

from nnlayout.examples.make_models import MODELS_DIR, ZOO, write_model
from nnlayout.frontends.onnx import import_to_files
from nnlayout.lowering.runtime import relative_difference
from nnlayout.lowering.to_numpy import import_generated, translate
from nnlayout.tools.driver import make_context, parse_pipeline, run_pipeline
from nnlayout.transforms import get_all_passes

TOLERANCE = 1e-4


def measure(name: str, target: str, threads: int, repeats: int, small: bool,
            folder: Path) -> tuple[str, ...]:
    onnx_path = write_model(name, small, folder)
    mlir_path = onnx_path.with_suffix(".mlir")
    module = import_to_files(onnx_path)
    start = time.perf_counter()
    spec = f"default-pipeline{{target={target}}}"
    run_pipeline(parse_pipeline(spec, get_all_passes()), make_context(), module)
    compile_seconds = time.perf_counter() - start

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(onnx_path), options,
                                           providers=["CPUExecutionProvider"])
    feed = session.get_inputs()[0]
    x = np.random.default_rng(0).standard_normal(feed.shape).astype(np.float32)

    with tempfile.TemporaryDirectory(prefix="nnlayout-latency-") as scratch:
        start = time.perf_counter()
        translation = translate(module, Path(scratch) / "model.py", source_path=str(mlir_path))
        translate_seconds = time.perf_counter() - start
        start = time.perf_counter()
        generated = import_generated(translation.code)
        load_seconds = time.perf_counter() - start
        ours, reference = generated.run(x), session.run(None, {feed.name: x})
        ours_times, ort_times = [], []
        for _ in range(repeats):
            start = time.perf_counter()
            generated.run(x)
            ours_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            session.run(None, {feed.name: x})
            ort_times.append(time.perf_counter() - start)
    difference = relative_difference(reference, ours)
    ours_ms, ort_ms = np.median(ours_times) * 1e3, np.median(ort_times) * 1e3
    return (name + ("_small" if small else ""), target, str(threads), f"{ours_ms:.1f}",
            f"{ort_ms:.1f}", f"{ours_ms / ort_ms:.2f}", f"{compile_seconds:.2f}",
            f"{translate_seconds:.2f}", f"{load_seconds:.2f}", f"{difference:.1e}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help=f"models (default: all of {', '.join(ZOO)})")
    parser.add_argument("--targets", default="onednn,avx2")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--small", action="store_true")
    parser.add_argument("-d", "--dir", type=Path, default=MODELS_DIR)
    args = parser.parse_args(argv)
    header = ("model", "target", "threads", "ours ms", "ort ms", "ratio", "compile s",
              "translate s", "load s", "rel diff")
    widths = (18, 8, 8, 9, 8, 6, 10, 12, 7, 9)
    print(" ".join(h.rjust(w) for h, w in zip(header, widths, strict=True)), flush=True)
    worst = 0.0
    for name in args.names or ZOO:
        for target in args.targets.split(","):
            row = measure(name, target, args.threads, args.repeats, args.small, args.dir)
            worst = max(worst, float(row[-1]))
            print(" ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)), flush=True)
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    raise SystemExit(main())
