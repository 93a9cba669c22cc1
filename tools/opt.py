"""`nnlayout-opt`: parse, verify, run a pass pipeline and print, like mlir-opt.

    nnlayout-opt in.mlir -p 'select-dispatch{target=avx2},insert-layouts' -o out.mlir

`-p` (or `--pass-pipeline`) also takes mlir-opt's anchored spelling,
`builtin.module(a,b{opt=v})`. `--print-mlir-compatible` prints what mlir-opt and iree-opt read
with --allow-unregistered-dialect, `--print-op-generic` what every tool reads
(docs/interop.md). `--split-input-file` treats each `// -----` chunk as its own module.
`--verify-diagnostics` checks MLIR-style annotations instead of printing errors:

    // expected-error @+1 {{input has 3 channels but weight expects 4}}
    %0 = nn.conv2d ...

An annotation names the line it is on (or `@+N`/`@-N` lines away, `@below`/`@above` the next
or previous line with code) and a substring of the message. As with mlir-opt, the run succeeds
only when every chunk produced exactly the diagnostics its annotations expect: each error and
each remark a pass emitted matches an annotation of its kind at its line, and each annotation
is matched by one diagnostic; every mismatch is listed with its location. nnlayout emits no
warnings, so an `expected-warning` always fails. `--remarks` prints all remarks to stderr.

Like mlir-opt's instrumentation, `--print-ir-{before,after}-all`, `--print-ir-{before,after}=PASS`
and `--print-ir-after-failure` dump the IR to stderr around passes, and `--time-passes` prints
where the time went (`tools/instrumentation.py`).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

from xdsl.passes import PassPipeline

from nnlayout.diagnostics import Location, UserError, location_of
from nnlayout.dialects.weights import WeightsError, move_weights_reference, weights_path
from nnlayout.files import (
    names_a_file,
    read_text,
    refuse_overwriting_inputs,
    write_stdout,
    write_text,
)
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module, split_input
from nnlayout.ir.printer import print_module
from nnlayout.ir.verify import verify_module
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
from nnlayout.tools.instrumentation import Instrumentation
from nnlayout.tools.pass_list import list_passes
from nnlayout.transforms import get_all_passes, remarks
from nnlayout.transforms.remarks import Remark

_EXPECTED = re.compile(
    r"//\s*expected-(?P<kind>error|warning|remark)\s*(?:@(?P<where>[+-]\d+|below|above))?"
    r"\s*\{\{(?P<text>.*?)\}\}"
)


@dataclass
class Expectation:
    line: int
    kind: str
    text: str
    seen: bool = False


def _expectations(chunk: str) -> list[Expectation]:
    lines = chunk.split("\n")
    result = []
    for index, line in enumerate(lines):
        for match in _EXPECTED.finditer(line):
            target = index + 1
            where = match.group("where")
            if where in ("below", "above"):
                step = 1 if where == "below" else -1
                target_index = index + step
                while 0 <= target_index < len(lines) and (
                    not lines[target_index].strip() or lines[target_index].strip().startswith("//")
                ):
                    target_index += step
                target = target_index + 1
            elif where:
                target += int(where)
            result.append(Expectation(target, match.group("kind"), match.group("text")))
    return result


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nnlayout-opt",
        description="Parse, verify, transform and print nn/layout IR.",
    )
    parser.add_argument("input", nargs="?", default="-", help="input .mlir file (default: stdin)")
    add_pipeline_option(
        parser,
        "pass pipeline, e.g. 'a,b{opt=v}' or, as mlir-opt spells it, 'builtin.module(a,b{opt=v})'",
    )
    add_load_option(parser)
    parser.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    parser.add_argument(
        "--split-input-file",
        action="store_true",
        help="treat each '// -----' chunk as a separate module",
    )
    parser.add_argument(
        "--verify-diagnostics",
        action="store_true",
        help="check '// expected-error {{...}}' annotations instead of failing",
    )
    parser.add_argument(
        "--print-op-generic", action="store_true", help="print operations in the generic form"
    )
    parser.add_argument(
        "--print-mlir-compatible",
        action="store_true",
        help="print the nn and layout ops in the generic form and every other op in its "
        "custom form, as mlir-opt and iree-opt read them with --allow-unregistered-dialect",
    )
    parser.add_argument(
        "--disable-verify", action="store_true", help="do not verify the IR between passes"
    )
    parser.add_argument(
        "--remarks",
        action="store_true",
        help="print every pass's remarks (fallbacks, layouts not propagated)",
    )
    add_instrumentation_options(parser)
    parser.add_argument(
        "--list-passes",
        action="store_true",
        help="list the passes (each with its summary and its options' types and defaults) "
        "and the targets, and exit",
    )
    add_traceback_option(parser)
    return parser


def _process(
    chunk: str,
    name: str,
    pipeline: PassPipeline | None,
    verify_each: bool,
    form: str,
    output: str,
    weights: list[Path],
    watch: Instrumentation,
) -> StringIO:
    """Compiles one chunk and prints it in `form` (custom, generic or mlir: see
    `print_module`); appends the weights file it names to `weights` (even when it then
    fails: -o must not overwrite it either)."""
    ctx = make_context()
    with watch.measure("parse"):
        module = parse_module(ctx, chunk, name)
    try:
        if (path := weights_path(module, name)) is not None:
            weights.append(path)
    except WeightsError as error:
        raise UserError(str(error)) from None
    with watch.measure("verify"):
        verify_module(module, chunk)
    if pipeline is not None:
        run_pipeline(pipeline, ctx, module, chunk, verify_each, watch)
    if output != "-" and names_a_file(output):
        try:
            move_weights_reference(module, name, output)
        except WeightsError as error:
            raise UserError(str(error)) from None
    out = StringIO()
    with watch.measure("output"):
        print_module(module, out, generic=form == "generic", mlir_compatible=form == "mlir")
    return out


def _form(args: argparse.Namespace) -> str:
    if args.print_op_generic:
        return "generic"
    return "mlir" if args.print_mlir_compatible else "custom"


def _check_annotations(
    chunk: str, error: UserError | None, emitted: Sequence[Remark], name: str
) -> list[str]:
    """Compares what a chunk produced (its error, its remarks) with its annotations, as
    mlir-opt's --verify-diagnostics does: each diagnostic must match an annotation of its
    kind at its line in this file (the annotation's text a substring of its message), and
    each annotation must be matched. Returns the mismatches, each with its location."""
    expectations = _expectations(chunk)
    produced: list[tuple[str, Location | None, str, str]] = [
        ("remark", location_of(r.op), r.render().partition("remark: ")[2], r.render())
        for r in emitted
    ]
    if error is not None:
        produced.append(("error", error.location, error.message, error.message))
    problems = []
    for kind, where, message, matched in produced:
        line = None if where is None or where.file != name else where.line
        match = next(
            (
                e
                for e in expectations
                if not e.seen
                and e.kind == kind
                and e.text in matched
                and (line == e.line or (where is None and kind == "error"))
            ),
            None,
        )
        if match is None:
            at = name if where is None else str(where)
            problems.append(f"{at}: unexpected {kind}: {message}")
        else:
            match.seen = True
    problems += [
        f"{name}:{e.line}: expected {e.kind} not produced: {{{{{e.text}}}}}"
        for e in expectations
        if not e.seen
    ]
    return problems


def _compile_chunks(
    args: argparse.Namespace,
    chunks: Sequence[str],
    name: str,
    pipeline: PassPipeline | None,
    weights: list[Path],
    watch: Instrumentation,
) -> tuple[list[str], list[UserError]]:
    """The output of each chunk that compiled, and the error of each that did not (as
    mlir-opt, every chunk's error is reported). With --verify-diagnostics, the errors and
    remarks are checked against the annotations instead: a mismatch raises."""
    outputs: list[str] = []
    problems: list[str] = []
    failed: list[UserError] = []
    for chunk in chunks:
        error: UserError | None = None
        with remarks.collecting() if args.verify_diagnostics else nullcontext() as emitted:
            try:
                outputs.append(
                    _process(
                        chunk,
                        name,
                        pipeline,
                        not args.disable_verify,
                        _form(args),
                        args.output,
                        weights,
                        watch,
                    ).getvalue()
                )
            except UserError as caught:
                error = caught
        if emitted is None:  # not checking annotations: every chunk's error is reported
            if error is not None:
                failed.append(error)
            continue
        problems += _check_annotations(chunk, error, emitted, name)
    if problems:
        raise UserError("diagnostics did not match:\n" + "\n".join(problems))
    return outputs, failed


def main(argv: Sequence[str]) -> int:
    args = _build_parser().parse_args(argv)
    load_plugins(args.load, args.traceback)
    if args.list_passes:
        print(list_passes(get_all_passes()))
        return 0
    remarks.set_printing(args.remarks)
    # Parsed once, before the input: a bad pipeline is reported first.
    pipeline = parse_pipeline(args.passes, get_all_passes()) if args.passes else None
    instrumentation = instrumentation_from(args, args.print_op_generic)
    text, name = read_text(args.input)
    chunks = split_input(text) if args.split_input_file else [text]
    weights: list[Path] = []
    try:  # the timing also when a chunk's diagnostics do not match
        outputs, failed = _compile_chunks(args, chunks, name, pipeline, weights, instrumentation)
        result = "// -----\n".join(outputs)  # the chunks that succeeded, as mlir-opt prints
        if args.output != "-":
            # The input itself may be rewritten in place (read whole, as mlir-opt allows);
            # the weights it names may not.
            refuse_overwriting_inputs([args.output], weights)
        if args.output == "-":
            write_stdout(result)
        elif outputs or not failed:
            write_text(args.output, result)
    finally:
        instrumentation.print_timing()
    if failed:
        for error in failed[:-1]:
            print(error.render(), file=sys.stderr)
        raise failed[-1]
    return 0


def entry() -> None:
    sys.exit(run_tool(main))


if __name__ == "__main__":
    entry()
