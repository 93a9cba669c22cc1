"""`nnlayout-opt --list-passes`: each pass as a pipeline element spelling its defaults, its
one-line summary, its options with their types and defaults; then the targets a `target`
option takes.

    select-dispatch{target=host padding=true remarks=false}
        Choose every op's kernel.
        target: str = host
        ...

A pass's summary is the first sentence of its module's docstring when that docstring starts
with the pass's name (nnlayout's passes: "`fold-pad`: a zero `nn.pad` ..."), else of its
class's docstring; xDSL's cse and dce have none and are described here.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import MISSING, fields, is_dataclass
from typing import get_type_hints

from xdsl.passes import ModulePass

from nnlayout.kernels.targets import TARGETS

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A sentence ends at a full stop followed by a space, outside parentheses and backquotes.
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_XDSL_SUMMARIES = {
    "cse": "Eliminates common subexpressions: an op equal to an earlier one is replaced by it "
    "(xDSL's pass).",
    "dce": "Removes ops whose results are unused and that have no side effects (xDSL's pass).",
}


def list_passes(passes: dict[str, Callable[[], type[ModulePass]]]) -> str:
    """The text of `--list-passes` for `passes` (name -> loader)."""
    lines = ["Passes (-p 'name{option=value ...}'; each first line gives the defaults):", ""]
    taking_target = []
    for name, load in sorted(passes.items()):
        pass_class = load()
        options = _options(pass_class)
        lines.append(described(name, pass_class))
        lines.append(f"    {summary(name, pass_class)}")
        lines += [f"    {option}: {kind} = {value}" for option, kind, value in options]
        if any(option == "target" for option, _, _ in options):
            taking_target.append(name)
    lines += ["", f"Targets (the target option of {', '.join(taking_target)}):"]
    rows = [("host", "the best of the targets below that runs on this machine")]
    rows += [(target.name, target.description) for target in TARGETS.values()]
    width = max(len(name) for name, _ in rows)
    lines += [f"    {name.ljust(width)}  {description}" for name, description in rows]
    return "\n".join(lines)


def summary(name: str, pass_class: type[ModulePass]) -> str:
    """The first sentence describing the pass, with a capital and a full stop."""
    module_doc = inspect.getdoc(inspect.getmodule(pass_class)) or ""
    own_doc = pass_class.__dict__.get("__doc__") or ""
    if own_doc.startswith(f"{pass_class.__name__}("):  # written by @dataclass: no docstring
        own_doc = ""
    if module_doc.lstrip("`").startswith(name):
        text = module_doc.split("`:", 1)[-1] if module_doc.startswith("`") else module_doc
        text = text.split(":", 1)[1] if text.startswith(name) else text
    else:
        text = inspect.cleandoc(own_doc) or _XDSL_SUMMARIES.get(name, "")
    paragraph = " ".join(text.strip().split("\n\n")[0].split())
    if not paragraph:
        return "(no description)"
    sentence = _first_sentence(paragraph)
    return sentence[0].upper() + sentence[1:]


def _first_sentence(paragraph: str) -> str:
    depth = 0
    quoted = False
    for index, character in enumerate(paragraph):
        if character == "`":
            quoted = not quoted
        elif not quoted and character in "([":
            depth += 1
        elif not quoted and character in ")]":
            depth -= 1
        elif (
            not quoted
            and depth <= 0
            and character in ".!?"
            and _SENTENCE_END.match(paragraph, index)
        ):
            return paragraph[: index + 1]
    return paragraph.rstrip(":;,") + "."


def _options(pass_class: type[ModulePass]) -> list[tuple[str, str, str]]:
    """Each option of the pass: its name, its type and its default as a pipeline spells it
    (`unset` for None)."""
    if not is_dataclass(pass_class):
        return []
    hints = get_type_hints(pass_class)
    options = []
    for field in fields(pass_class):
        if field.name == "name" or not field.init:
            continue
        kind = hints.get(field.name, field.type)
        kind_name = kind.__name__ if isinstance(kind, type) else str(kind).replace("typing.", "")
        default = field.default if field.default is not MISSING else None
        spelled = _spelled(default)[1:] or ("(empty)" if default == () else "unset")
        options.append((field.name, kind_name, spelled))
    return options


def described(name: str, pass_class: type[ModulePass]) -> str:
    """`name{option=default ...}`, the pass as a pipeline would spell its defaults."""
    options = (
        [
            field.name + _spelled(field.default)
            for field in fields(pass_class)
            if field.name != "name" and field.init
        ]
        if is_dataclass(pass_class)
        else []
    )
    return name + (f"{{{' '.join(options)}}}" if options else "")


def _spelled(value: object) -> str:
    """`=value` as a pipeline reads it back: a string that is not one plain word is quoted
    (`label="a b"`), None and the empty tuple are the bare option name, a tuple is its values
    with commas (`sizes=1,2`)."""
    if value is None or value == ():
        return ""
    if isinstance(value, tuple):
        return "=" + ",".join(_spelled(item)[1:] for item in value)
    if isinstance(value, bool):
        return "=" + str(value).lower()
    if isinstance(value, str) and (value in ("true", "false") or not _WORD.fullmatch(value)):
        return '="' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"={value}"
