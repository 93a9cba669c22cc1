"""What `transformers_zoo.py` and `timm_zoo.py` share: a model exported by one of torch's
exporters, imported, compiled for each target with padding on and off, and run as the
generated module against onnxruntime on the same inputs, as one row of a table; their
arguments and their `main`."""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from nnlayout.benchmarks.language_models import _without_package_root, table
from nnlayout.benchmarks.startup import run_with_threads
from nnlayout.benchmarks.torchvision_export import missing_packages, require
from nnlayout.benchmarks.torchvision_zoo import compiled, imported
from nnlayout.benchmarks.zoo_latency import onnxruntime_session, verdict
from nnlayout.diagnostics import UserError
from nnlayout.kernels.targets import get_target
from nnlayout.lowering.to_numpy import generated_module
from nnlayout.reports.census import kernel_census
from nnlayout.runtime.binding import relative_difference

EXPORTERS = ("classic", "dynamo")
TARGETS = ("ref", "avx2", "avx512", "onednn", "host")
COLUMNS = ("model", "exporter", "imported", "ops", "max rel diff", "output magnitude")
#: Exports `model` with `exporter` into a folder: the .onnx file and its inputs by name.
Exporter = Callable[[str, str, Path], tuple[Path, dict[str, np.ndarray]]]


def row(name: str, exporter: str, export: Exporter, targets: Sequence[str]) -> list[str]:
    """The model's row: imported (or the refusal, or torch's export error), ops on host, the
    largest difference from onnxruntime over the targets and padding, the output's largest
    magnitude."""
    with tempfile.TemporaryDirectory(prefix="nnlayout-census-") as scratch:
        try:
            path, inputs = export(name, exporter, Path(scratch))
        except Exception as error:  # noqa: BLE001 - torch's refusal, shown in the row
            lines = [line for line in str(error).splitlines() if line.strip()]
            reason = lines[0].strip() if lines else ""
            return [name, exporter, f"export failed: {type(error).__name__}: {reason}"[:120]]
        try:
            module, source = imported(path, Path(scratch))
        except UserError as error:
            return [name, exporter, error.message[:200]]
        expected = onnxruntime_session(path, 1).run(None, inputs)  # type: ignore[attr-defined]
        worst, xs = 0.0, list(inputs.values())
        for target in targets:
            for padding in (True, False):
                with generated_module(compiled(module, target, padding), source_path=source) as g:
                    worst = max(worst, relative_difference(expected, g.run(*xs)))
        ops = sum(
            kernel_census(compiled(module, "host", True), get_target("host")).kernels.values()
        )
        magnitude = max(float(np.abs(e).max()) for e in expected)
        return [name, exporter, "yes", str(ops), f"{worst:.1e}", f"{magnitude:.2g}"]


def arguments(
    argv: Sequence[str], description: str, models: Sequence[str]
) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", default=",".join(models), help="(default: all)")
    parser.add_argument("--exporters", default=",".join(EXPORTERS), help="classic, dynamo")
    parser.add_argument("--targets", default=",".join(TARGETS), help=", ".join(TARGETS))
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.models, args.exporters = args.models.split(","), args.exporters.split(",")
    args.targets = args.targets.split(",")
    known = ((args.models, models), (args.exporters, EXPORTERS), (args.targets, TARGETS))
    for given, names in known:
        if unknown := [x for x in given if x not in names]:
            parser.error(f"unknown: {', '.join(unknown)} (known: {', '.join(names)})")
    return parser, args


def main(
    argv: Sequence[str] | None,
    script: str,
    description: str,
    models: Sequence[str],
    package: str,
    export: Exporter,
) -> int:
    """`script`'s main: one line and exit 2 without torch, onnxscript or `package`; else, in
    a child at 1 thread, the table of every model and exporter asked for; exit 1 if a result
    differs from onnxruntime's by more than 1e-4 relative."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser, args = arguments(argv, description, models)
    missing = missing_packages()
    missing += [] if importlib.util.find_spec(package) else [package]
    require(parser, missing, f"exporting the {package} models", "models")
    if not args.child:  # oneDNN fixes its thread count when it loads: 1 thread, in a child
        return run_with_threads(script, [*argv, "--child"], 1).returncode
    with _without_package_root():
        rows = [row(m, e, export, args.targets) for m in args.models for e in args.exporters]
    print(table(rows, args.markdown, COLUMNS))
    return verdict(max((float(r[4]) for r in rows if len(r) == len(COLUMNS)), default=0.0))
