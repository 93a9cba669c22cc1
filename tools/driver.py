"""What every nnlayout command-line tool shares (the IR itself is read, verified and printed
by `nnlayout.ir`):

- pipeline parsing: `parse_pipeline` reads `pass-a, pass-b{opt=v}` as MLIR spells it, in our
  words where xDSL refuses it, and applies NNLAYOUT_DISABLE_PADDING (a yes sets
  `padding=false` in every pass that has the option and whose element leaves it unset) and
  NNLAYOUT_BF16 (a yes sets `bf16=true` likewise: `default-pipeline` runs convert-to-bf16);
  `run_pipeline` runs it, verifying after each pass, its errors naming the pass and the op;
- plugins: `--load FILE.py` runs a file that registers passes, its errors named as its own;
- the options the tools share (`--load`, IR dumps and pass timing) and argparse types;
- running a tool without tracebacks: `run_tool`.

Errors a user can cause are `UserError`s (or xDSL's parse/verify/pass exceptions, which are
converted): they print as `file:line:col: error: message` with the source line and a caret,
as mlir-opt does, and the tool exits with status 1. Set NNLAYOUT_TRACEBACK=1 or pass
`--traceback` to see the Python traceback of any error.
"""

from __future__ import annotations

import argparse
import difflib
import gc
import importlib.util
import os
import re
import sys
import traceback as traceback_module
import warnings
from collections.abc import Callable, Collection, Sequence
from dataclasses import is_dataclass, replace
from pathlib import Path
from typing import IO, get_type_hints

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ModuleOp,
)
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.arg_spec import ArgSpecParseError
from xdsl.utils.exceptions import DiagnosticException

from nnlayout.diagnostics import DiagnosticError, UserError, error_at, first_message
from nnlayout.files import flush_stdout, silence_stdout
from nnlayout.ir.verify import verify_module
from nnlayout.tools.instrumentation import Instrumentation, PassTiming, step_label

_PIPELINE_SEPARATOR = re.compile(r'"(?:[^"\\]|\\.)*"|[{},]')
_PASS_OPTION = re.compile(r'([^\s=]+)(?:=("(?:[^"\\]|\\.)*"|\S*))?')
_SPACED_EQUALS = re.compile(r"\{[^}]*(\s=|=\s)")  # `{target = avx2}`
_NUMBER = re.compile(r"[-+]?\d+(\.\d*)?")  # what xDSL reads as a number, not a word
_FLOAT = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?")
# What xDSL reads as each option type: a quoted or bare string, but not a number or a bool.
_OPTION_VALUE: dict[object, tuple[str, Callable[[str], bool]]] = {
    bool: ("true or false", lambda value: value in ("true", "false")),
    int: ("an integer", lambda value: re.fullmatch(r"[-+]?\d+", value) is not None),
    str: (
        "a word or a quoted string",
        lambda value: (
            value.startswith('"') or not (value in ("true", "false") or _NUMBER.fullmatch(value))
        ),
    ),
    float: ("a number", lambda value: _FLOAT.fullmatch(value) is not None),
}
# A mantissa without a point: xDSL reads `2` and `2e3` as an int and a word, not as floats;
# nor does it read a point without a digit before it (`.5`).
_WHOLE_MANTISSA = re.compile(r"^([-+]?\d+)(?=[eE]|$)")
_BARE_POINT = re.compile(r"^([-+]?)\.")
# Set to a yes, it turns channel padding off in every pass the pipeline leaves it on in.
DISABLE_PADDING = "NNLAYOUT_DISABLE_PADDING"
# Set to a yes, it turns bf16 on in every pass the pipeline leaves it off in (docs/quantization.md).
BF16 = "NNLAYOUT_BF16"
_YES = ("1", "true", "yes", "on")
_NO = ("", "0", "false", "no", "off")

GC_YOUNG_THRESHOLD = 100_000


def _pipeline_elements(spec: str) -> list[str]:
    """`spec` split at its top-level commas (outside `{...}` and strings), each stripped, as
    are its braces' insides: `a, b{ x=1 }` is `a` and `b{x=1}`, as MLIR's pipeline parser
    allows. An empty element (a comma too many, anywhere) is refused where it starts."""
    starts, depth = [0], 0
    for found in _PIPELINE_SEPARATOR.finditer(spec):
        mark = found.group()
        depth += {"{": 1, "}": -1}.get(mark, 0)
        if mark == "," and depth == 0:
            starts.append(found.end())
    ends = [start - 1 for start in starts[1:]] + [len(spec)]
    elements = [spec[start:end].strip() for start, end in zip(starts, ends, strict=True)]
    if len(elements) > 1 and "" in elements:
        raise UserError(
            f"bad pass pipeline '{spec}': Expected pass name here "
            f"(at character {starts[elements.index('')] + 1})"
        )
    return [_stripped_options(element) for element in elements]


def _stripped_options(element: str) -> str:
    name, brace, options = element.partition("{")
    if not brace or not options.endswith("}"):
        return element
    return f"{name.strip()}{{{options[:-1].strip()}}}"


def _pipeline_options(element: str) -> list[tuple[str, str | None]]:
    """The `key=value` options of one pipeline element, in order (value None: no `=`)."""
    options = element.partition("{")[2].rstrip().removesuffix("}")
    return [(found.group(1), found.group(2)) for found in _PASS_OPTION.finditer(options)]


def unknown_pass(name: str, available: Collection[str]) -> UserError:
    close = difflib.get_close_matches(name, available, n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return UserError(
        f"unknown pass '{name}'{hint}; available passes: {', '.join(sorted(available))}"
    )


def _explain_refusal(element: str, available: dict[str, Callable[[], type[ModulePass]]]) -> None:
    """For an element xDSL refused: an unknown pass or option, or an option value of the
    wrong type, as a UserError in our words (nothing when none of these is the reason)."""
    name = element.partition("{")[0].strip()
    if name not in available:
        raise unknown_pass(name, available)
    fields = {key: kind for key, kind in get_type_hints(available[name]()).items() if key != "name"}
    for key, value in _pipeline_options(element):
        key = key.replace("-", "_")  # xDSL's spelling of a field, as it accepts it
        if key not in fields:
            known = ", ".join(fields) or "none"
            raise UserError(f"pass '{name}' has no option '{key}'; its options: {known}")
        described, valid = _OPTION_VALUE.get(fields[key], ("a value", bool))
        if value is None or not valid(value):
            got = "no value" if value is None else f"'{value}'"
            raise UserError(f"option '{key}' of pass '{name}' takes {described}, got {got}")


def _in_xdsl_spelling(element: str, available: dict[str, Callable[[], type[ModulePass]]]) -> str:
    """`element` with what MLIR accepts and xDSL refuses spelled as xDSL reads it: a point
    in each number given to a float option (`factor=2` -> `factor=2.0`; xDSL says
    "Incompatible types"), and `=true` after a bool option given bare (`{report}`, a flag
    set, as MLIR reads it)."""
    name, brace, options = element.partition("{")
    if not brace or name.strip() not in available:
        return element
    fields = get_type_hints(available[name.strip()]())

    def respelled(found: re.Match[str]) -> str:
        key, value = found.group(1), found.group(2)
        kind = fields.get(key.replace("-", "_"))
        if value is None and kind is bool:
            return key + "=true"
        if value is None or kind is not float or not _FLOAT.fullmatch(value):
            return found.group()
        value = _BARE_POINT.sub(r"\g<1>0.", value, count=1)
        return key + "=" + _WHOLE_MANTISSA.sub(r"\1.0", value, count=1)

    body = options.rstrip().removesuffix("}")
    return name + brace + _PASS_OPTION.sub(respelled, body) + options[len(body) :]


def description(doc: str | None) -> str:
    """The first paragraph of a module's docstring, as an argparse description (the first
    line alone stops mid-sentence)."""
    return " ".join((doc or "").strip().split("\n\n")[0].split())


def non_negative_int(text: str) -> int:
    """An argparse type: a seed, a limit."""
    return _int_at_least(text, 0, "a non-negative integer")


def positive_int(text: str) -> int:
    """An argparse type: a count of runs."""
    return _int_at_least(text, 1, "a positive integer")


def _int_at_least(text: str, least: int, described: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = least - 1
    if value < least:
        raise argparse.ArgumentTypeError(f"expected {described}, got '{text}'")
    return value


def add_pipeline_option(parser: argparse.ArgumentParser, text: str) -> None:
    """-p/--passes/--pass-pipeline: the pass pipeline a tool runs, `text` its help."""
    parser.add_argument("-p", "--passes", "--pass-pipeline", default="", help=text)


def add_traceback_option(parser: argparse.ArgumentParser) -> None:
    """--traceback: let exceptions through (`wants_traceback`)."""
    parser.add_argument(
        "--traceback",
        action="store_true",
        help="show Python tracebacks (for debugging nnlayout itself)",
    )


def add_load_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--load",
        action="append",
        default=[],
        metavar="FILE.py",
        help="run a Python file first, e.g. one whose passes call "
        "nnlayout.transforms.register_pass (repeatable)",
    )


def add_instrumentation_options(parser: argparse.ArgumentParser) -> None:
    """mlir-opt's IR dumps and pass timing (tools/instrumentation.py)."""
    parser.add_argument(
        "--print-ir-before-all", action="store_true", help="print the IR to stderr before each pass"
    )
    parser.add_argument(
        "--print-ir-after-all", action="store_true", help="print the IR to stderr after each pass"
    )
    parser.add_argument(
        "--print-ir-before",
        action="append",
        default=[],
        metavar="PASS",
        help="print the IR to stderr before these passes (comma-separated, "
        "repeatable; a composite's name selects each of its steps)",
    )
    parser.add_argument(
        "--print-ir-after",
        action="append",
        default=[],
        metavar="PASS",
        help="print the IR to stderr after these passes",
    )
    parser.add_argument(
        "--print-ir-after-failure",
        action="store_true",
        help="print the IR to stderr as a pass that failed left it",
    )
    parser.add_argument(
        "--time-passes",
        action="store_true",
        help="print the wall time of each pass (and of reading, verifying and writing) to stderr",
    )


def _pass_names(option: str, values: list[str]) -> list[str]:
    """The passes named by the occurrences of `option` (comma-separated), each registered."""
    from nnlayout.transforms import get_all_passes  # here: the passes import this module

    names = [name.strip() for value in values for name in value.split(",")]
    if "" in names:  # `--print-ir-after=` or `a,,b` would print nothing, silently
        raise UserError(f"{option} takes pass names separated by commas; one is empty")
    available = get_all_passes()
    for name in names:
        if name not in available:
            error = unknown_pass(name, available)
            error.message = f"{option}: {error.message}"
            raise error
    return names


def instrumentation_from(args: argparse.Namespace, generic: bool = False) -> Instrumentation:
    """What the options of `add_instrumentation_options` ask for (pass names checked); IR
    dumps in the generic form when `generic`."""
    before = _pass_names("--print-ir-before", args.print_ir_before)
    after = _pass_names("--print-ir-after", args.print_ir_after)
    return Instrumentation(
        print_before=None if args.print_ir_before_all else before,
        print_after=None if args.print_ir_after_all else after,
        print_after_failure=args.print_ir_after_failure,
        generic=generic,
        timing=PassTiming() if args.time_passes else None,
    )


# The files `--load` ran (absolute paths): an exception raised through them is the plugin's.
_PLUGIN_FILES: set[str] = set()


def load_plugins(paths: Sequence[str], traceback: bool = False) -> None:
    """Runs each file of `--load` as a module of its own (so that it registers its passes);
    a file that is missing, raises or exits is a UserError naming it (unless `traceback`).
    A file named twice runs once (else its passes would be "already registered")."""
    seen: set[str] = set()
    for path in paths:
        if not os.path.exists(path):
            raise UserError(f"cannot load '{path}': no such file or directory")
        if os.path.realpath(path) in seen:
            continue
        seen.add(os.path.realpath(path))
        _PLUGIN_FILES.add(os.path.abspath(path))
        # A name of its own in sys.modules: dataclasses and typing resolve a plugin's string
        # annotations (`from __future__ import annotations`) through it.
        name = f"nnlayout_plugin_{len(_PLUGIN_FILES)}_{Path(path).stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None or not Path(path).is_file():
            raise UserError(f"cannot load '{path}': not a Python file")
        module = sys.modules[name] = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except SystemExit as error:  # even exit(0): the tool would stop, having done nothing
            raise UserError(f"loading '{path}' failed: it called sys.exit({error.code!r})") from (
                error if traceback else None
            )
        except Exception as error:  # noqa: BLE001 - the plugin's own error, reported as such
            if traceback:
                raise
            reason = error.message if isinstance(error, UserError) else error
            raise UserError(f"loading '{path}' failed: {type(error).__name__}: {reason}") from None


def _unanchored(spec: str) -> str:
    """`spec` without mlir-opt's anchor: `builtin.module(a,b{x=y})` is `a,b{x=y}` (nnlayout's
    passes all run on the module). An anchor on another op (`func.func(cse)`) is refused:
    nnlayout runs no pass on one function alone."""
    given, stripped = spec, spec.strip()
    for anchor in ("builtin.module", "any"):
        if not stripped.startswith(anchor):
            continue
        rest = stripped[len(anchor) :].lstrip()
        if rest.startswith("(") and _closing_paren(rest) == len(rest) - 1:
            stripped = spec = rest[1:-1].strip()
            break
    for element in _pipeline_elements(spec) if stripped else []:
        name = element.partition("{")[0]
        if "(" in name:
            anchor = name.partition("(")[0].strip()
            if anchor in ("builtin.module", "any"):
                raise UserError(
                    f"bad pass pipeline '{given}': the '(' after '{anchor}' must close at "
                    "the end of the pipeline"
                )
            raise UserError(
                f"bad pass pipeline '{given}': a pipeline nested on '{anchor}' is not "
                "supported; nnlayout's passes run on the whole module: write "
                "'builtin.module(pass-a,pass-b{option=value})' or 'pass-a,pass-b{option=value}'"
            )
    return spec


def _closing_paren(text: str) -> int:
    """The index of the `)` closing the `(` that `text` starts with (parentheses inside
    quoted option values do not count), or -1."""
    depth = 0
    for found in re.finditer(r'"(?:[^"\\]|\\.)*"|[()]', text):
        mark = found.group()
        if mark == "(":
            depth += 1
        elif mark == ")":
            depth -= 1
            if depth == 0:
                return found.start()
    return -1


def parse_pipeline(spec: str, available: dict[str, Callable[[], type[ModulePass]]]) -> PassPipeline:
    """Parses `pass-a, pass-b{opt=v}`, also anchored as mlir-opt spells it
    (`builtin.module(pass-a, pass-b{opt=v})`); unknown passes, bad options and an option given
    twice (xDSL would keep the last) become UserErrors. NNLAYOUT_DISABLE_PADDING=1 sets
    `padding=false` where the spec leaves a pass's padding option unset, NNLAYOUT_BF16=1
    `bf16=true` where it leaves a pass's bf16 option unset."""
    spec = _unanchored(spec)
    given = spec
    elements = [_in_xdsl_spelling(element, available) for element in _pipeline_elements(spec)]
    spec = ",".join(elements)
    try:
        pipeline = PassPipeline.parse_spec(available, spec)
    except ArgSpecParseError as error:
        # xDSL's message spans lines: a header, "pass-pipeline:1:COL", the spec, a caret, the
        # reason; keep one line. Its column counts in our respelling of the spec: it is
        # given only where that is the user's text.
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        where = lines[1].rsplit(":", 1)[-1] if len(lines) > 2 else ""
        where = f" (at character {where})" if where.isdigit() and spec == given else ""
        hint = (
            " (options are name=value, without spaces around '=')"
            if _SPACED_EQUALS.search(given)
            else ""
        )
        raise UserError(f"bad pass pipeline '{given}': {lines[-1]}{where}{hint}") from None
    except ValueError as error:
        for element in elements:
            _explain_refusal(element, available)
        raise UserError(f"bad pass options in '{spec}': {error}") from None
    for element in elements:
        keys = [key for key, _ in _pipeline_options(element)]
        if repeated := next((key for key in keys if keys.count(key) > 1), None):
            raise UserError(
                f"option '{repeated}' of pass '{element.partition('{')[0].strip()}' is given twice"
            )
    pipeline = _option_from_environment(pipeline, elements, "padding", DISABLE_PADDING, False)
    return _option_from_environment(pipeline, elements, "bf16", BF16, True)


def _takes(one_pass: ModulePass, option: str) -> bool:
    return is_dataclass(one_pass) and isinstance(getattr(one_pass, option, None), bool)


def _option_from_environment(
    pipeline: PassPipeline, elements: Sequence[str], option: str, variable: str, when_yes: bool
) -> PassPipeline:
    """With `variable` set to a yes (1, true, yes or on, in any case, spaced or not), each
    pass with the boolean `option` its element does not set gets `option=when_yes`
    (DISABLE_PADDING: padding=false; BF16: bf16=true). Any value but a yes or a no is
    refused, in the words of the first pass it would set (a typo ignored would leave the
    option as it was)."""
    unset = [
        index
        for index, (one_pass, element) in enumerate(zip(pipeline.passes, elements, strict=True))
        if _takes(one_pass, option)
        and option not in {key.replace("-", "_") for key, _ in _pipeline_options(element)}
    ]
    if not unset:
        return pipeline
    value = os.environ.get(variable, "")
    word = value.strip().lower()
    if word not in _YES + _NO:
        first = pipeline.passes[unset[0]]
        steps = getattr(first, "passes", lambda: (first,))()
        label = step_label(next((step for step in steps if _takes(step, option)), first), first)
        on, off = f"{option} on", f"{option} off"
        yes, no = (on, off) if when_yes else (off, on)
        raise UserError(
            f"{label}: {variable}={value!r}: expected 1, true, yes or on ({yes}) "
            f"or 0, false, no, off or empty ({no})"
        )
    if word in _NO:
        return pipeline
    passes = [
        replace(one_pass, **{option: when_yes}) if index in unset else one_pass
        for index, one_pass in enumerate(pipeline.passes)
    ]
    return PassPipeline(tuple(passes), pipeline.callback)


def run_pipeline(
    pipeline: PassPipeline,
    ctx: Context,
    module: ModuleOp,
    text: str | None = None,
    verify_each: bool = True,
    instrumentation: Instrumentation | None = None,
) -> None:
    """Applies each pass, verifying after each; errors name the pass and the op (and, in a
    pass made of passes such as default-pipeline, the one of them that failed).
    `instrumentation` dumps the IR around passes and times them."""
    watch = instrumentation or Instrumentation()
    for one_pass in pipeline.passes:
        composite = getattr(one_pass, "passes", None)
        steps: Sequence[ModulePass] = (one_pass,) if composite is None else composite()
        for step in steps:
            name = step_label(step, one_pass)
            watch.before(step, one_pass, module)
            try:
                with watch.measure(name):
                    step.apply(ctx, module)
            except Exception as error:
                watch.failed(name, module)
                if isinstance(error, DiagnosticError):
                    raise error_at(error.op, f"{name}: {error.message}", text) from None
                if isinstance(error, DiagnosticException):
                    raise UserError(f"{name}: {first_message(error)}") from None
                raise
            watch.after(step, one_pass, module)
        if verify_each:
            try:
                with watch.measure("verify"):
                    verify_module(module, text)
            except UserError as error:
                watch.failed(one_pass.name, module)
                error.message = f"IR after pass '{one_pass.name}' does not verify: {error.message}"
                raise


def traceback_requested(argv: Sequence[str]) -> bool:
    return "--traceback" in argv or os.environ.get("NNLAYOUT_TRACEBACK") == "1"


def run_tool(main: Callable[[Sequence[str]], int], argv: Sequence[str] | None = None) -> int:
    """Runs a tool's main; user errors print one diagnostic to stderr and return 1."""
    args = list(sys.argv[1:] if argv is None else argv)
    # A module of thousands of ops is millions of objects that live until the tool exits:
    # collecting the young generation every 700 allocations (Python's default) spends a
    # fifth of the compile time walking them, as compilers written in Python find (mypy).
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    if traceback_requested(args):
        return main(args)
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        return _run_reporting_errors(main, args)


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: IO[str] | None = None,
    line: str | None = None,
) -> None:
    """A warning as one `warning: ...` line (e.g. oneDNN missing), not Python's two lines
    with a source line of nnlayout's."""
    print(f"warning: {message}", file=sys.stderr if file is None else file)


def _run_reporting_errors(main: Callable[[Sequence[str]], int], args: list[str]) -> int:
    try:
        status = main(args)
        flush_stdout()  # a closed pipe or a full disk shows here, not in Python's own exit
        return status
    except BrokenPipeError:
        # The reader went away (`nnlayout-opt --list-passes | head`): stop quietly, as a
        # tool killed by SIGPIPE does; later writes to stdout go nowhere.
        silence_stdout()
        return 1
    except UserError as error:
        print(error.render(), file=sys.stderr)
    except DiagnosticException as error:
        print(f"error: {first_message(error)}", file=sys.stderr)
    except MemoryError:
        print("error: out of memory", file=sys.stderr)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
    except Exception as error:  # noqa: BLE001 - a bug in nnlayout; still no wall of text
        if (where := _plugin_frame(error)) is not None:  # the user's pass, not nnlayout
            print(
                f"{where}: error: {type(error).__name__}: {error}\n"
                "note: raised by code loaded with --load; rerun with --traceback to see "
                "the calls",
                file=sys.stderr,
            )
        else:
            print(
                f"internal error: {type(error).__name__}: {error}\n"
                "note: this is a bug in nnlayout; rerun with --traceback and report it",
                file=sys.stderr,
            )
    return 1


def _plugin_frame(error: BaseException) -> str | None:
    """`file:line` of the innermost frame of `error`'s traceback in a file `--load` ran."""
    for frame in reversed(traceback_module.extract_tb(error.__traceback__)):
        if os.path.abspath(frame.filename) in _PLUGIN_FILES:
            return f"{frame.filename}:{frame.lineno}"
    return None
