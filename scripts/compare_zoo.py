"""Model zoo end to end: build each ONNX model, import it, run it in the interpreter and in
onnxruntime on the same seeded input, and compare.

    python -m nnlayout.scripts.compare_zoo            # full size (ResNet-50, ... at 224x224)
    python -m nnlayout.scripts.compare_zoo --small    # the reduced variants (what pytest runs)

Prints one row per model; exits 1 if any output differs from onnxruntime by more than 1e-4 of
its largest magnitude. The import goes through files, as `nnlayout-import` does (model.onnx ->
model.mlir + model.npz), and the interpreter reads the IR back from text. Times are wall-clock
seconds of one run each: import = read .onnx, translate, write .mlir/.npz; parse = read and
verify the .mlir; interp = the first interpreter run (reading the .npz included); ort = one run
of an already created onnxruntime session.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime
from xdsl.dialects import func

from nnlayout.dialects import nn
from nnlayout.examples.make_models import MODELS_DIR, ZOO, write_model
from nnlayout.frontends.onnx import import_model, load_model, write_imported
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.runtime.interpreter import run_function
from nnlayout.tools.driver import description

TOLERANCE = 1e-4


@dataclass
class Comparison:
    """One model's figures; times in seconds."""

    model: str
    onnx_nodes: int
    nn_ops: int
    max_abs_diff: float
    relative_diff: float
    import_time: float
    parse_time: float
    interpreter_time: float
    ort_time: float
    mlir_bytes: int


def compare(name: str, small: bool = False, folder: Path = MODELS_DIR, seed: int = 0) -> Comparison:
    """Builds, imports and runs zoo model `name` in `folder`; compares with onnxruntime."""
    onnx_path = write_model(name, small, folder)
    mlir_path = onnx_path.with_suffix(".mlir")

    start = time.perf_counter()
    model = load_model(onnx_path)
    write_imported(import_model(model), mlir_path)
    import_time = time.perf_counter() - start

    start = time.perf_counter()
    text = mlir_path.read_text(encoding="utf-8")
    module = parse_module(make_context(), text, str(mlir_path))
    module.verify()
    parse_time = time.perf_counter() - start

    graph_input = model.graph.input[0]
    shape = [d.dim_value for d in graph_input.type.tensor_type.shape.dim]
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)

    start = time.perf_counter()
    ours = run_function(module, [x], source_path=str(mlir_path))
    interpreter_time = time.perf_counter() - start

    session = onnxruntime.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    start = time.perf_counter()
    reference = session.run(None, {graph_input.name: x})
    ort_time = time.perf_counter() - start

    max_abs = relative = 0.0
    for a, b in zip(ours, reference, strict=True):
        if a.shape != b.shape:
            raise AssertionError(f"{name}: result shape {a.shape}, onnxruntime gives {b.shape}")
        diff = float(np.max(np.abs(a - b)))
        max_abs = max(max_abs, diff)
        relative = max(relative, diff / max(float(np.max(np.abs(b))), np.finfo(np.float32).tiny))
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    nn_ops = sum(
        1
        for op in function.body.ops
        if op.name.startswith("nn.") and not isinstance(op, nn.ConstantOp)
    )
    return Comparison(
        name + ("_small" if small else ""),
        len(model.graph.node),
        nn_ops,
        max_abs,
        relative,
        import_time,
        parse_time,
        interpreter_time,
        ort_time,
        len(text.encode()),
    )


def format_table(rows: Sequence[Comparison]) -> str:
    header = (
        f"{'model':<20} {'nodes':>6} {'nn ops':>6} {'max abs diff':>13} {'rel diff':>9} "
        f"{'import s':>9} {'parse s':>8} {'interp s':>9} {'ort s':>7} {'.mlir KB':>9}"
    )
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(
            f"{r.model:<20} {r.onnx_nodes:>6} {r.nn_ops:>6} {r.max_abs_diff:>13.3e} "
            f"{r.relative_diff:>9.2e} {r.import_time:>9.2f} {r.parse_time:>8.2f} "
            f"{r.interpreter_time:>9.2f} {r.ort_time:>7.3f} {r.mlir_bytes / 1024:>9.1f}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("names", nargs="*", help=f"models (default: all of {', '.join(ZOO)})")
    parser.add_argument("--small", action="store_true", help="the reduced variants")
    parser.add_argument(
        "-d",
        "--dir",
        type=Path,
        default=MODELS_DIR,
        help="where the .onnx, .mlir and .npz files go",
    )
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(ZOO))
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; choose from {', '.join(ZOO)}")
    rows = [compare(name, args.small, args.dir) for name in args.names or ZOO]
    print(format_table(rows))
    failed = [r.model for r in rows if not r.relative_diff <= TOLERANCE]
    if failed:
        print(f"relative difference above {TOLERANCE:g}: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
