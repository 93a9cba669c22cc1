"""What dispatch and layout passes do to the model zoo, and proof that they keep its results.

    python -m nnlayout.benchmarks.layout_report                 # full-size zoo, all targets
    python -m nnlayout.benchmarks.layout_report --small resnet50

For each model, target (ref, avx2, avx512) and padding (on, off) it runs the whole
`default-pipeline` (with verify-memory-plan), then prints: compute ops,
ops on a blocked kernel, ops that fell back to a reference kernel, activation reorders left,
padding bytes of activations (input reorders included), compile time, and the largest
difference of the result from the unoptimised program's (relative to the output's largest
magnitude). The fallback reasons are
listed after the table. Exits 1 if any difference exceeds 1e-4.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType

from nnlayout.dialects.constant_expressions import is_constant_expression
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import ReorderOp, element_bytes, encoding_name, layout_of
from nnlayout.examples.make_models import MODELS_DIR, ZOO, write_model
from nnlayout.frontends.onnx import import_to_files
from nnlayout.ir.context import make_context
from nnlayout.kernels.providers import registry
from nnlayout.runtime.binding import relative_difference
from nnlayout.runtime.interpreter import Interpreter, argument_specs, find_entry
from nnlayout.tools.driver import description, parse_pipeline, run_pipeline
from nnlayout.transforms import get_all_passes, remarks

TOLERANCE = 1e-4
PIPELINE = "default-pipeline{{target={target} padding={padding} verify=true}}"


@dataclass
class Row:
    model: str
    target: str
    padding: bool
    ops: int
    blocked: int
    fallbacks: int
    reorders: int
    padding_bytes: int
    compile_seconds: float
    relative_diff: float
    reasons: Counter[str] = field(default_factory=Counter[str])


def load(name: str, small: bool, folder: Path) -> tuple[ModuleOp, str]:
    """The zoo model `name` imported into `folder`, and the path of its .mlir."""
    onnx_path = write_model(name, small, folder)
    return import_to_files(onnx_path), str(onnx_path.with_suffix(".mlir"))


def measure(
    name: str,
    module: ModuleOp,
    source: str,
    inputs: list[np.ndarray],
    expected: Sequence[np.ndarray],
    target: str,
    padding: bool,
) -> Row:
    compiled = module.clone()
    spec = PIPELINE.format(target=target, padding=str(padding).lower())
    with remarks.collecting() as emitted:
        start = time.perf_counter()
        run_pipeline(parse_pipeline(spec, get_all_passes()), make_context(), compiled)
        seconds = time.perf_counter() - start
    kernels = [k for op in compiled.walk() if (k := kernel_of(op)) is not None]
    families = Counter(registry().lookup(k.kernel_name.data).family for k in kernels)
    reorders = sum(
        isinstance(op, ReorderOp)
        and not is_constant_expression(op)
        and encoding_name(op.input.type) != encoding_name(op.output.type)
        for op in compiled.walk()
    )
    padding_bytes = 0
    for op in compiled.walk():
        if is_constant_expression(op):
            continue  # activations only: weights are computed and packed once, at load
        for result in op.results:
            result_type = result.type
            if isinstance(result_type, TensorType) and (layout := layout_of(result_type)):
                padding_bytes += layout.padding_elements(result_type.get_shape()) * (
                    element_bytes(result_type.element_type)
                )
    actual = Interpreter(compiled, source_path=source).run(inputs)
    reasons = Counter(
        r.message.split(", not supported by")[0]
        for r in emitted
        if r.pass_name == "select-dispatch"
    )
    return Row(
        name,
        target,
        padding,
        len(kernels),
        families["blocked"] + families["sparse"],
        families["ref"] if target != "ref" else 0,
        reorders,
        padding_bytes,
        seconds,
        relative_difference(expected, actual),
        reasons,
    )


def format_table(rows: Sequence[Row]) -> str:
    header = (
        f"{'model':<18} {'target':<7} {'pad':<4} {'ops':>5} {'blocked':>8} "
        f"{'fallback':>9} {'reorders':>9} {'pad KiB':>8} {'compile s':>10} {'rel diff':>9}"
    )
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(
            f"{r.model:<18} {r.target:<7} {'on' if r.padding else 'off':<4} {r.ops:>5} "
            f"{r.blocked:>8} {r.fallbacks:>9} {r.reorders:>9} {r.padding_bytes / 1024:>8.1f} "
            f"{r.compile_seconds:>10.2f} {r.relative_diff:>9.1e}"
        )
    lines.append("")
    lines.append("fallback reasons (select-dispatch remarks), per model/target/padding:")
    for r in rows:
        for reason, count in sorted(r.reasons.items()):
            lines.append(
                f"  {r.model} {r.target} padding={'on' if r.padding else 'off'}: {count} x {reason}"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("names", nargs="*", help=f"models (default: all of {', '.join(ZOO)})")
    parser.add_argument("--small", action="store_true", help="the reduced variants")
    parser.add_argument("--targets", default="ref,avx2,avx512")
    parser.add_argument("-d", "--dir", type=Path, default=MODELS_DIR)
    args = parser.parse_args(argv)
    rows: list[Row] = []
    for name in args.names or ZOO:
        module, source = load(name, args.small, args.dir)
        rng = np.random.default_rng(0)
        inputs = [
            rng.standard_normal(s.shape).astype(s.dtype) for s in argument_specs(find_entry(module))
        ]
        expected = Interpreter(module, source_path=source).run(inputs)
        for target in args.targets.split(","):
            for padding in (True, False):
                rows.append(
                    measure(
                        name + ("_small" if args.small else ""),
                        module,
                        source,
                        inputs,
                        expected,
                        target,
                        padding,
                    )
                )
                print(format_table(rows[-1:]).splitlines()[2], flush=True)
    print()
    print(format_table(rows))
    return 0 if all(r.relative_diff <= TOLERANCE for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
