"""`nnlayout-translate`: compile a module with a pass pipeline, then write its planned
function as a standalone numpy program.

    nnlayout-translate net.mlir -p 'default-pipeline{target=avx2}' --to numpy -o net.py

writes `net.py`, the planned IR `net.planned.mlir` it loads, and `net.weights.npz` (a copy of
the weights file) when the model has external constants; see `lowering/to_numpy.py`. The
input must be planned (bufferize and plan-memory have run) after the pipeline, which is
empty by default. Errors are one message and exit 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from nnlayout.diagnostics import DiagnosticError, UserError, error_at
from nnlayout.ir.module import read_module
from nnlayout.runtime.interpreter import find_entry
from nnlayout.tools.driver import (
    add_instrumentation_options,
    add_load_option,
    add_pipeline_option,
    add_traceback_option,
    instrumentation_from,
    load_plugins,
    parse_pipeline,
    run_pipeline,
    run_tool,
)
from nnlayout.transforms import get_all_passes


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nnlayout-translate",
        description="Write a planned function of an nn/layout module as a Python module.",
    )
    parser.add_argument("input", help="input .mlir file ('-' for stdin)")
    add_pipeline_option(
        parser,
        "pass pipeline to run first, e.g. 'default-pipeline{target=avx2}'",
    )
    add_load_option(parser)
    add_instrumentation_options(parser)
    parser.add_argument("--entry", help="function to translate (default: the only public one)")
    parser.add_argument(
        "--to",
        choices=["numpy"],
        default="numpy",
        help="what to generate (numpy: a Python module calling nnlayout's kernels)",
    )
    parser.add_argument("-o", "--output", required=True, help="the .py file to write")
    add_traceback_option(parser)
    return parser


def main(argv: Sequence[str]) -> int:
    from nnlayout.lowering.to_numpy import translate

    args = _build_parser().parse_args(argv)
    load_plugins(args.load, args.traceback)
    if not args.output.endswith(".py"):
        raise UserError(
            f"-o names the Python module to write, NAME.py (NAME.planned.mlir and "
            f"NAME.weights.npz go beside it), not '{args.output}'"
        )
    folder = Path(args.output).parent
    if not folder.is_dir():  # else: "cannot write NAME.planned.mlir", the first file
        problem = "is not a directory" if folder.exists() else "does not exist"
        raise UserError(f"the directory of -o '{args.output}', '{folder}', {problem}")
    pipeline = parse_pipeline(args.passes, get_all_passes()) if args.passes else None
    instrumentation = instrumentation_from(args)
    with instrumentation.measure("parse and verify"):
        ctx, module, text = read_module(args.input)
    find_entry(module, args.entry)  # a wrong --entry first, not after a pipeline's errors
    if pipeline is not None:
        run_pipeline(pipeline, ctx, module, text, instrumentation=instrumentation)
    try:
        with instrumentation.measure("translate"):
            translate(module, Path(args.output), source_path=args.input, entry=args.entry)
    except DiagnosticError as error:
        raise error_at(error.op, error.message, text) from None
    instrumentation.print_timing()
    return 0


def entry() -> None:
    sys.exit(run_tool(main))


if __name__ == "__main__":
    entry()
