"""`nnlayout-run`: compile a module with a pass pipeline, then run one of its functions on
numpy inputs with the reference interpreter (or, with `--backend generated`, the numpy module
`nnlayout-translate` writes for a planned function), and save the results.

    nnlayout-run net.mlir -p 'canonicalize,cse' --input x.npy --output-dir out/
    nnlayout-run net.mlir --random-inputs 0 --output-dir out/

Inputs are .npy files, one per argument of the entry function, in order (logical arrays, even
for arguments whose type carries a layout), or standard-normal arrays from a seed. Each result
is written to `DIR/result{i}.npy` and summarised on one line (shape, dtype, sum, crc32 of its
bytes), so that two runs can be compared at a glance. Errors are one message and exit 1.
`--backend generated --profile N` then runs the generated module N more times and prints the
median time of each op, and per kernel and oneDNN implementation (`reports/profile.py`).
"""

from __future__ import annotations

import argparse
import os
import sys
import zlib
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from nnlayout.diagnostics import DiagnosticError, UserError, error_at, os_error_reason
from nnlayout.dialects.weights import WeightsError, weights_path
from nnlayout.files import (
    Outputs,
    open_input,
    print_stdout,
    read_npy_header,
    refuse_overwriting_inputs,
)
from nnlayout.ir.module import read_module
from nnlayout.runtime.interpreter import (
    ArgumentSpec,
    Interpreter,
    argument_specs,
    check_input_count,
    check_inputs_fit,
    find_entry,
    index_bounds,
)
from nnlayout.tools.driver import (
    add_instrumentation_options,
    add_load_option,
    add_pipeline_option,
    add_traceback_option,
    instrumentation_from,
    load_plugins,
    non_negative_int,
    parse_pipeline,
    positive_int,
    run_pipeline,
    run_tool,
)
from nnlayout.tools.instrumentation import Instrumentation, PassTiming
from nnlayout.transforms import get_all_passes

if TYPE_CHECKING:
    from nnlayout.reports.profile import Profile


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nnlayout-run",
        description="Run a function of an nn/layout module on numpy inputs and save its results.",
    )
    parser.add_argument("input", help="input .mlir file ('-' for stdin)")
    add_pipeline_option(
        parser,
        "pass pipeline to run before interpreting, e.g. 'a,b{opt=v}'",
    )
    add_load_option(parser)
    add_instrumentation_options(parser)
    parser.add_argument("--entry", help="function to run (default: the only public one)")
    inputs = parser.add_mutually_exclusive_group()
    inputs.add_argument(
        "--input",
        dest="inputs",
        nargs="+",
        action="extend",
        metavar="FILE",
        help=".npy file of each argument, in order",
    )
    inputs.add_argument(
        "--random-inputs",
        type=non_negative_int,
        metavar="SEED",
        help="standard-normal inputs from this seed",
    )
    parser.add_argument("--output-dir", required=True, help="where result{i}.npy are written")
    parser.add_argument(
        "--backend",
        choices=["interpreter", "generated"],
        default="interpreter",
        help="run with the interpreter (the oracle), or translate a planned "
        "function to a numpy module in a temporary directory and run that",
    )
    parser.add_argument(
        "--profile",
        type=positive_int,
        metavar="RUNS",
        help="with --backend generated: run RUNS more times, timing each op, "
        "and print where the time goes",
    )
    parser.add_argument(
        "--print-time",
        action="store_true",
        help="print the time of parsing, the passes and running on one line "
        "to stderr (--time-passes: each row)",
    )
    add_traceback_option(parser)
    return parser


def load_input(path: str, spec: ArgumentSpec) -> np.ndarray:
    """Reads the .npy file for one argument; errors name the argument and the file. Only a
    regular file is opened (a FIFO would block); the header is checked against the argument
    before any data is read, so that a file claiming a huge shape allocates nothing; Python
    objects (pickles) are never loaded."""
    try:
        with open_input(path) as handle:
            shape, stored = read_npy_header(handle)
            # numpy.save writes ml_dtypes' bfloat16 as 2-byte voids ('|V2'): read as bfloat16
            bfloat16 = spec.dtype.name == "bfloat16" and stored == np.dtype("V2")
            dtype = spec.dtype if bfloat16 else stored
            spec.check_header(shape, dtype)
            handle.seek(0)
            array = np.load(handle, allow_pickle=False)
            return array.view(dtype) if bfloat16 else array.astype(dtype, copy=False)
    except OSError as error:
        raise UserError(f"{spec.label}: cannot read '{path}': {os_error_reason(error)}") from None
    except ValueError as error:
        message = str(error)
        if not message.startswith(("is ", "is not")):
            message = f"is not a valid .npy file: {message}"
        raise UserError(f"{spec.label}: '{path}' {message}") from None
    except EOFError as error:
        raise UserError(f"{spec.label}: '{path}' is not a valid .npy file: {error}") from None


def random_inputs(
    specs: Sequence[ArgumentSpec], seed: int, bounds: Sequence[int | None] | None = None
) -> list[np.ndarray]:
    """Seeded inputs: standard normal floats, integers (quantized data) over their whole
    range, masks (bool) true and false in equal measure, indices (an argument's `bounds`,
    `index_bounds`) below their bound, and other i64 data 0 or 1 (an attention mask)."""
    rng = np.random.default_rng(seed)
    bounds = [None] * len(specs) if bounds is None else bounds
    return [_random(rng, spec, bound) for spec, bound in zip(specs, bounds, strict=True)]


def _random(rng: np.random.Generator, spec: ArgumentSpec, bound: int | None) -> np.ndarray:
    if spec.dtype == np.bool_:
        return np.asarray(rng.random(spec.shape) < 0.5)  # a rank-0 comparison is a scalar
    if bound is not None or spec.dtype == np.int64:
        return rng.integers(0, bound or 2, spec.shape, dtype=spec.dtype)
    if np.issubdtype(spec.dtype, np.integer):  # quantized data: its whole range
        info = np.iinfo(spec.dtype)
        return rng.integers(info.min, info.max, spec.shape, endpoint=True).astype(spec.dtype)
    return rng.standard_normal(spec.shape).astype(spec.dtype)


def summary(index: int, array: np.ndarray) -> str:
    """One line describing a result: shape, dtype, sum (float64) and the crc32 of its bytes."""
    checksum = zlib.crc32(np.ascontiguousarray(array).tobytes())
    with np.errstate(invalid="ignore", over="ignore"):  # inf + -inf is nan, as it should be
        total = float(array.sum(dtype=np.float64))
    return (
        f"result{index}: {list(array.shape)} {array.dtype.name} sum={total:.9g} "
        f"crc32={checksum:08x}"
    )


def result_paths(output_dir: Path, count: int) -> list[Path]:
    return [output_dir / f"result{index}.npy" for index in range(count)]


def write_results(output_dir: Path, results: Sequence[np.ndarray]) -> None:
    """result{i}.npy in `output_dir`, made if missing, all or nothing (`files.Outputs`); an
    error names the path that failed."""
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UserError(
            f"cannot create --output-dir '{output_dir}': {os_error_reason(error)}"
        ) from None
    with Outputs() as outputs:
        for path, result in zip(result_paths(output_dir, len(results)), results, strict=True):
            with outputs.open(path, "wb") as handle:
                np.save(handle, result)


def _phases(timing: PassTiming) -> str:
    """`--print-time`'s line: the rows of `--time-passes` summed into parsing (and
    verifying), the passes (and verifying between them) and running (with translating and
    loading a generated module; the profile's runs apart)."""
    rows = timing.seconds
    parse = rows.get("parse and verify", 0.0)
    run = sum(
        seconds
        for label, seconds in rows.items()
        if label == "translate and load" or label.startswith("run (")
    )
    passes = sum(rows.values()) - parse - run - rows.get("profile", 0.0)
    return f"time: parse {parse:.3f} s, passes {passes:.3f} s, run {run:.3f} s"


def _inputs(args: argparse.Namespace, function: FuncOp) -> list[np.ndarray]:
    """The entry function's inputs: random from --random-inputs' seed, or read from the files
    of --input (one per argument, each checked against it)."""
    specs = argument_specs(function)
    check_inputs_fit(specs)
    if args.random_inputs is not None:
        return random_inputs(specs, args.random_inputs, index_bounds(function))
    if args.inputs is None and specs:
        raise UserError(
            f"@{function.sym_name.data} takes {len(specs)} input(s): pass them "
            "with --input FILE.npy ... or use --random-inputs SEED"
        )
    paths = args.inputs or []
    check_input_count(function, len(paths))
    return [load_input(path, spec) for path, spec in zip(paths, specs, strict=True)]


def _execute(
    args: argparse.Namespace,
    module: ModuleOp,
    entry: str,
    inputs: list[np.ndarray],
    instrumentation: Instrumentation,
) -> tuple[Sequence[np.ndarray], Profile | None]:
    """Runs `entry` with the backend --backend names; the results, and with --profile the
    generated module's profile."""
    if args.backend != "generated":
        with instrumentation.measure("run (interpreter)"):
            return Interpreter(module, source_path=args.input).run(inputs, entry), None
    from nnlayout.lowering.to_numpy import generated_module

    with ExitStack() as scope:
        with instrumentation.measure("translate and load"):
            generated = scope.enter_context(
                generated_module(module, source_path=args.input, entry=entry)
            )
        with instrumentation.measure("run (generated)"):
            results = generated.run(*inputs)
        if not args.profile:
            return results, None
        from nnlayout.reports.profile import profile

        with instrumentation.measure("profile"):
            return results, profile(generated, inputs, args.profile, warm_up=False)


def _weights_of(module: ModuleOp, source_path: str) -> Path | None:
    try:
        return weights_path(module, source_path)
    except WeightsError:
        return None  # reported where the weights are loaded, at the op


def main(argv: Sequence[str]) -> int:
    args = _build_parser().parse_args(argv)
    if os.path.exists(args.output_dir) and not os.path.isdir(args.output_dir):
        raise UserError(f"--output-dir '{args.output_dir}' exists and is not a directory")
    if args.profile and args.backend != "generated":
        raise UserError(
            "--profile times the generated module's ops: add --backend generated "
            "(the interpreter is the oracle, not what ships)"
        )
    load_plugins(args.load, args.traceback)
    pipeline = parse_pipeline(args.passes, get_all_passes()) if args.passes else None
    instrumentation = instrumentation_from(args)
    if args.print_time and instrumentation.timing is None:
        instrumentation.timing = PassTiming()  # what --print-time sums, not printed whole
    with instrumentation.measure("parse and verify"):
        ctx, module, text = read_module(args.input)
    find_entry(module, args.entry)  # a wrong --entry first, not after a pipeline's errors
    if pipeline is not None:
        run_pipeline(pipeline, ctx, module, text, instrumentation=instrumentation)

    function = find_entry(module, args.entry)
    # Before running: no result may go over the module, its weights or an input array.
    refuse_overwriting_inputs(
        result_paths(Path(args.output_dir), len(function.function_type.outputs)),
        [args.input, *(args.inputs or []), _weights_of(module, args.input)],
        "--output-dir",
    )
    inputs = _inputs(args, function)
    try:
        results, report = _execute(args, module, function.sym_name.data, inputs, instrumentation)
    except DiagnosticError as error:
        raise error_at(error.op, error.message, text) from None

    write_results(Path(args.output_dir), results)
    print_stdout(*(summary(index, result) for index, result in enumerate(results)))
    if report is not None:
        print_stdout(report.report())
    if args.time_passes:
        instrumentation.print_timing()
    if args.print_time and instrumentation.timing is not None:
        print(_phases(instrumentation.timing), file=sys.stderr)
    return 0


def entry() -> None:
    sys.exit(run_tool(main))


if __name__ == "__main__":
    entry()
