"""The main job on a bundled example: build a model, import it, compile it through the whole
default pipeline, run it, check it, and say what the compiler did.

    python -m nnlayout.examples.run_example                      # small ResNet-50, target host
    python -m nnlayout.examples.run_example densenet121 --target avx512 --full

Steps: the zoo model is built as ONNX (seeded random weights, no download) and imported with
`nnlayout-import`'s code, into the current directory or the folder `--output-dir` names (a
line at the end lists the files written); the unoptimised program runs in the reference
interpreter; `default-pipeline{target=... verify=true}` compiles it (batch norm folding,
dispatch, post-op fusion, layouts, propagation, weight packing, bufferization, memory
planning, plan verification); `nnlayout-translate` turns the planned program into a numpy
module (`NAME_generated.py` beside them, oneDNN primitives created at its import), which
runs, and its results are compared with the unoptimised ones and with onnxruntime (when
installed; a line says when it is not). The summary lists the kernels chosen (and oneDNN's
implementations behind its kernels), the fallbacks and fusions not done with their reasons,
the activation reorders, the arena against its lower bound, and the latencies of the
unoptimised program, the generated module and onnxruntime.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, ModuleOp

from nnlayout.examples.make_models import ZOO, write_model
from nnlayout.frontends.onnx import import_to_files
from nnlayout.ir.context import make_context
from nnlayout.kernels.targets import TARGETS
from nnlayout.lowering.bufferize import activation_reorders
from nnlayout.lowering.to_numpy import import_generated, translate
from nnlayout.reports.census import kernel_census
from nnlayout.runtime.binding import relative_difference
from nnlayout.runtime.interpreter import Interpreter, argument_specs, find_entry
from nnlayout.tools.driver import description, parse_pipeline, run_pipeline, run_tool
from nnlayout.transforms import get_all_passes, remarks
from nnlayout.transforms.remarks import Remark

TOLERANCE = 1e-4


def median_seconds(run: object, inputs: list[np.ndarray], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run(inputs)  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def onnxruntime_session(onnx_path: Path) -> Callable[[list[np.ndarray]], list[np.ndarray]] | None:
    """A function running the model in onnxruntime, when it is installed."""
    try:
        import onnxruntime
    except ImportError:
        return None
    session = onnxruntime.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return lambda inputs: session.run(None, dict(zip(names, inputs, strict=True)))


def _arguments(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("model", nargs="?", default="resnet50", choices=sorted(ZOO))
    parser.add_argument("--full", action="store_true", help="full size instead of the small one")
    parser.add_argument(
        "--target", default="host", help=f"host (the best here) or one of {', '.join(TARGETS)}"
    )
    parser.add_argument("--padding", default="true", choices=["true", "false"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "-o",
        "--output-dir",
        "--out",
        "-d",
        "--dir",
        dest="dir",
        type=Path,
        default=Path("."),
        help="the folder for the model, its IR, its weights and the generated module "
        "(default: the current directory)",
    )
    return parser.parse_args(argv)


def _print_census(compiled: ModuleOp, target: str, emitted: Sequence[Remark]) -> None:
    """The kernels chosen, the implementations behind them, and what fell back or was not
    fused, with the reasons."""
    census = kernel_census(compiled)
    print(
        "kernels: " + ", ".join(f"{name} x{count}" for name, count in census.kernels.most_common())
    )
    if census.implementations:
        print(
            f"{census.implementations_title}: "
            + ", ".join(f"{name} x{count}" for name, count in census.implementations.most_common())
        )
    for (name, reason), count in census.reasons.items():
        print(f"fallback x{count}: {name}: {reason}")
    for pass_name, what in (("select-dispatch", "fallback"), ("fuse-post-ops", "not fused")):
        said = Counter(f"{r.op.name}: {r.message}" for r in emitted if r.pass_name == pass_name)
        for message, count in said.most_common():
            print(f"{what} x{count}: {message}")


def _print_plan(compiled: ModuleOp) -> None:
    """The activation reorders and the memory plan's figures."""
    function = find_entry(compiled)

    def figure(name: str) -> int:
        attribute = function.attributes.get(name)
        return attribute.value.data if isinstance(attribute, IntegerAttr) else 0

    print(f"activation reorders: {activation_reorders(compiled)}")
    arena, bound = figure("nnlayout.arena_bytes"), figure("nnlayout.lower_bound_bytes")
    print(
        f"arena {arena / 2**20:.2f} MiB, lower bound {bound / 2**20:.2f} MiB, "
        f"unplanned {figure('nnlayout.unplanned_bytes') / 2**20:.2f} MiB, "
        f"padding {figure('nnlayout.padding_bytes') / 1024:.1f} KiB; "
        f"copies avoided: halo {figure('nnlayout.halo_copy_bytes_avoided') / 1024:.1f} KiB, "
        f"concat {figure('nnlayout.concat_copy_bytes_avoided') / 1024:.1f} KiB"
    )


def _compare(
    onnx_path: Path,
    inputs: list[np.ndarray],
    results: tuple[list[np.ndarray], list[np.ndarray]],
    runs: tuple[Interpreter, Callable[[list[np.ndarray]], list[np.ndarray]]],
    repeats: int,
) -> bool:
    """Prints how far the generated module's results (`actual`) are from the unoptimised
    program's (`expected`) and onnxruntime's, and the latencies of the three; whether the
    results match."""
    expected, actual = results
    reference, generated = runs
    difference = relative_difference(expected, actual)
    print(f"generated module vs unoptimised: relative difference {difference:.2e}")
    ort = onnxruntime_session(onnx_path)
    if ort is None:
        print("onnxruntime comparison skipped: onnxruntime is not installed")
    ort_difference = None if ort is None else relative_difference(ort(inputs), actual)
    if ort_difference is not None:
        print(f"generated module vs onnxruntime: relative difference {ort_difference:.2e}")
    latencies = [
        ("unoptimised (interpreter)", reference.run),
        ("generated module", generated),
        *([("onnxruntime", ort)] if ort is not None else []),
    ]
    print(
        f"latency (median of {repeats}): "
        + ", ".join(
            f"{name} {median_seconds(run, inputs, repeats) * 1e3:.1f} ms" for name, run in latencies
        )
    )
    return difference <= TOLERANCE and (ort_difference is None or ort_difference <= TOLERANCE)


def main(argv: Sequence[str]) -> int:
    args = _arguments(argv)
    onnx_path = write_model(args.model, not args.full, args.dir)
    mlir_path = onnx_path.with_suffix(".mlir")
    source = str(mlir_path)
    ctx = make_context()
    module = import_to_files(onnx_path)
    rng = np.random.default_rng(0)
    inputs = [
        rng.standard_normal(s.shape).astype(s.dtype) for s in argument_specs(find_entry(module))
    ]
    print(f"model: {onnx_path.name} -> {mlir_path.name}, input {list(inputs[0].shape)}")

    reference = Interpreter(module, source_path=source)
    expected = reference.run(inputs)

    compiled = module.clone()
    spec = f"default-pipeline{{target={args.target} padding={args.padding} verify=true}}"
    with remarks.collecting() as emitted:
        start = time.perf_counter()
        run_pipeline(parse_pipeline(spec, get_all_passes()), ctx, compiled)
        compile_seconds = time.perf_counter() - start
    start = time.perf_counter()
    translation = translate(
        compiled, args.dir / f"{onnx_path.stem}_generated.py", source_path=source
    )
    generated = import_generated(translation.code)
    load_seconds = time.perf_counter() - start
    actual = generated.run(*inputs)
    print(
        f"compiled with {spec} in {compile_seconds:.2f} s; translated to "
        f"{translation.code.name} and loaded (weights packed, primitives created) in "
        f"{load_seconds:.2f} s"
    )
    _print_census(compiled, args.target, emitted)
    _print_plan(compiled)
    runs = (reference, lambda x: generated.run(*x))
    ok = _compare(onnx_path, inputs, (expected, actual), runs, args.repeats)
    written = sorted(path.name for path in args.dir.glob(f"{onnx_path.stem}*") if path.is_file())
    print(f"wrote into {args.dir.resolve()}: {', '.join(written)}")
    print("OK" if ok else f"MISMATCH above {TOLERANCE:g}")
    return 0 if ok else 1


def entry() -> None:
    raise SystemExit(run_tool(main))


if __name__ == "__main__":
    entry()
