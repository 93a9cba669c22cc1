"""What every nnlayout command-line tool shares: the context, a parser that records source
locations, verification that names the failing op, and error reporting without tracebacks.

Errors a user can cause are `UserError`s (or xDSL's parse/verify/pass exceptions, which are
converted): they print as `file:line:col: error: message` with the source line and a caret,
as mlir-opt does, and the tool exits with status 1. Set NNLAYOUT_TRACEBACK=1 or pass
`--traceback` to see the Python traceback of any error.
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import math
import os
import re
import struct
import sys
import traceback as traceback_module
import warnings
from bisect import bisect_right
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import IO, TypeVar, get_type_hints

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    Builtin,
    ComplexType,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    RankedStructure,
    StringAttr,
    TensorType,
    UnknownLoc,
    f32,
    f64,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, SSAValue, TypeAttribute
from xdsl.irdl import base
from xdsl.parser import AttrParser, Parser
from xdsl.parser.generic_parser import ParserState
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.arg_spec import ArgSpecParseError
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Input, Position
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRToken, MLIRTokenKind, StringLiteral

from nnlayout.dialects.layout import Layout, verify_encoding
from nnlayout.dialects.nn import NN
from nnlayout.tools.instrumentation import Instrumentation, PassTiming, step_label

SPLIT_MARKER = "// -----"
_SPLIT_LINE = re.compile(rf"^[ \t]*{SPLIT_MARKER}[ \t]*$", re.MULTILINE)
_ANGLE_OR_QUOTE = re.compile(r'[<>"]')
_NEGATIVE_HEX = re.compile(r"-\s*0[xX]")
_STRING_TAIL = re.compile(r'(?:[^"\\\n]|\\.)*"')
_INTEGER_LIST = re.compile(r"\[\s*(-?\d+(?:\s*,\s*-?\d+)*)\s*\]")
_UNEXPECTED_TOKEN = re.compile(
    r"Unexpected token Token\(kind=<MLIRTokenKind\.\w+: '(.*?)'>, "
    r"span=Span\[(\d+):\d+\].*expected MLIRTokenKind\.(\w+)",
    re.S,
)
_UNEXPECTED_CHARACTER = re.compile(r"Unexpected character: (.)", re.S)
_REDEFINITION = re.compile(r'Redefinition of symbol "(.*)"', re.S)
_T = TypeVar("_T")
_DENSE_LITERAL_TYPE = base(RankedStructure[IntegerType | IndexType | AnyFloat | ComplexType])


def _arith() -> Dialect:
    from xdsl.dialects.arith import Arith

    return Arith


def _memref() -> Dialect:
    from xdsl.dialects.memref import MemRef

    return MemRef


def make_context() -> Context:
    """A context with every dialect nnlayout reads or writes; arith and memref are imported
    on first use (importing arith alone costs about 0.15 s of start-up)."""
    ctx = Context()
    for dialect in (Builtin, func.Func, NN, Layout):
        ctx.load_dialect(dialect)
    ctx.register_dialect("arith", _arith)
    ctx.register_dialect("memref", _memref)
    return ctx


@dataclass(order=True)
class Location:
    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class UserError(Exception):
    """An error in the user's input, reported without a traceback."""

    def __init__(
        self,
        message: str,
        location: Location | None = None,
        source_line: str | None = None,
        op: Operation | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.location = location
        self.source_line = source_line
        self.op = op

    def __str__(self) -> str:  # where it escapes as an exception: a generated module's load
        return self.render()

    def render(self) -> str:
        head = (
            f"{self.location}: error: {self.message}"
            if self.location
            else (f"error: {self.message}")
        )
        lines = [head]
        if self.source_line is not None and self.location is not None:
            lines.append(self.source_line)
            lines.append(" " * (self.location.column - 1) + "^")
        elif self.op is not None:
            lines.append(f"note: in operation: {_one_line(self.op)}")
        return "\n".join(lines)


def _one_line(op: Operation) -> str:
    text = str(op).strip().splitlines()
    return text[0] if len(text) == 1 else text[0] + " ..."


class _Lexer(MLIRLexer):
    """xDSL's lexer with a string-literal pattern that cannot backtrack: xDSL's nests `+` in
    `*`, which takes exponential time on an unterminated string (a stray `"` before a long
    line hung nnlayout-opt for minutes)."""

    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')

    _PREFIX_EXAMPLES = {
        "%": '%x, %0; quoted names such as %"x y" are not MLIR',
        "^": "^bb0",
        "#": '#layout.layout<"NCHW8c">',
    }

    def _lex_prefixed_ident(self, start_pos: Position) -> MLIRToken:
        """xDSL's message for a `%`, `^`, `#` or `!` with no name after it is "Expected
        suffix identifier after {first_char}", its placeholder unfilled."""
        try:
            return super()._lex_prefixed_ident(start_pos)
        except ParseError as error:
            if "{first_char}" not in error.msg:
                raise
            prefix = self.input.at(self.pos - 1) or ""
            example = self._PREFIX_EXAMPLES.get(prefix, "")
            raise ParseError(
                error.span,
                f"expected a name or a number after '{prefix}'"
                + (f" (e.g. {example})" if example else ""),
            ) from None

    def _lex_string_literal(self, start_pos: Position) -> MLIRToken:
        """A literal whose escapes spell UTF-8 is a string. xDSL (like MLIR) prints each
        non-ASCII character of a string as escaped UTF-8 bytes, then reads such a literal
        back as bytes, not as the string it printed: a weights file named modèle.npz made IR
        that no tool could read back."""
        token = super()._lex_string_literal(start_pos)
        if token.kind is MLIRTokenKind.BYTES_LIT:
            try:
                StringLiteral.from_span(token.span).bytes_contents.decode()
            except UnicodeDecodeError:
                return token
            return MLIRToken(MLIRTokenKind.STRING_LIT, token.span)
        return token


class LocatedParser(Parser):
    """xDSL's parser attaches no location to ops; this one records file:line:col of each
    op so that verifier and pass errors can point at the source.

    It is also faster on large models: line numbers come from a table of line starts (xDSL
    counts the newlines before every op, quadratic in the file size), and each distinct
    `tensor<...>` spelling is parsed once (types are immutable, so ops can share them)."""

    _line_starts: list[int] | None = None
    _tensor_types: dict[str, TypeAttribute] | None = None

    def __init__(self, ctx: Context, text: str, name: str = "<unknown>") -> None:
        super().__init__(ctx, "", name)
        self._parser_state = ParserState(_Lexer(Input(text, name)))

    def _line_and_column(self, offset: int) -> tuple[int, int]:
        if self._line_starts is None:
            content = self.lexer.input.content
            starts, newline = [0], content.find("\n")
            while newline >= 0:
                starts.append(newline + 1)
                newline = content.find("\n", newline + 1)
            self._line_starts = starts
        line = bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def parse_optional_type(self) -> TypeAttribute | None:
        token = self._current_token
        if token.kind == MLIRTokenKind.BARE_IDENT and token.text in ("f80", "f128"):
            # xDSL cannot pack their values: a constant of them was an internal error.
            self.raise_error(
                f"{token.text} is not supported (xDSL holds no {token.text} values)",
                token.span.start,
                token.span.end,
            )
        if token.kind != MLIRTokenKind.BARE_IDENT or token.text != "tensor":
            return super().parse_optional_type()
        content = self.lexer.input.content
        end = _closing_angle(content, token.span.end)
        if self._tensor_types is None:
            self._tensor_types = {}
        key = content[token.span.start : end]
        if (cached := self._tensor_types.get(key)) is not None:
            self._resume_from(end)
            return cached
        parsed = super().parse_optional_type()
        if parsed is not None and end and self.pos >= end and not content[end : self.pos].strip():
            self._tensor_types[key] = parsed
        return parsed

    def parse_comma_separated_list(
        self, delimiter: Parser.Delimiter, parse: Callable[[], _T], context_msg: str = ""
    ) -> list[_T]:
        """Plain decimal integer lists in brackets (`strides [2, 2]`) are read with one regular
        expression instead of token by token; anything else goes to xDSL."""
        if delimiter is Parser.Delimiter.SQUARE and parse == self.parse_integer:
            found = _INTEGER_LIST.match(self.lexer.input.content, self.pos)
            if found is not None:
                self._resume_from(found.end())
                return [int(item) for item in found.group(1).split(",")]  # type: ignore[misc]
        return super().parse_comma_separated_list(delimiter, parse, context_msg)

    def _parse_block(self) -> Block:
        """xDSL says only " in block definition" when a region is not closed."""
        if self._current_token.kind != MLIRTokenKind.CARET_IDENT:
            self.raise_error("expected '}' to close the region (or a block label such as ^bb1:)")
        return super()._parse_block()

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        """An input without operations (empty, or only comments) is an empty module, as for
        mlir-opt; xDSL would say 'Could not parse entire input!'. Values used but never defined
        are reported at the first op that uses one (xDSL points at the end of the input)."""
        if self._current_token.kind == MLIRTokenKind.EOF:
            return ModuleOp([])
        try:
            return super().parse_module(allow_implicit_module)
        except ParseError as error:
            users = [
                use.operation
                for references in self.forward_ssa_references.values()
                for value in references.values()
                for use in value.uses
            ]
            located = sorted(where for op in users if (where := location_of(op)) is not None)
            if not located or self._line_starts is None:
                raise
            offset = self._line_starts[located[0].line - 1] + located[0].column - 1
            self.raise_error(error.msg, offset, offset + 1)

    def _parse_dense_literal_type(self) -> RankedStructure[Attribute]:
        """xDSL expands a splat `dense<1.0> : T` into a Python list of T's element count
        before building the attribute; a T too large for memory is refused here, at T."""
        from nnlayout.lowering.limits import human_bytes, memory_limit

        start = self.pos
        dense_type = self.expect(self.parse_optional_type, "Dense attribute must be typed!")
        # xDSL's own check rebuilds this constraint from the type hint on every literal
        # (a fifth of parsing a ResNet-50); it is built once here.
        if not _DENSE_LITERAL_TYPE.verifies(dense_type):
            self.raise_error(
                "Expected memref, vector or tensor type of integer, index, float, or complex type"
            )
        if DYNAMIC_INDEX in dense_type.get_shape():
            self.raise_error("Dense literal attribute should have a static shape.")
        count = math.prod(dense_type.get_shape())
        # One list slot (8 bytes) and the element itself per value, while parsing.
        needed = count * (8 + max(1, getattr(dense_type.element_type, "bitwidth", 8) // 8))
        if needed > memory_limit():
            self.raise_error(
                f"dense literal of type {dense_type} has {count:,} elements; parsing it needs "
                f"{needed:,} bytes ({human_bytes(needed)}), more than this machine's memory "
                f"({human_bytes(memory_limit())})",
                start,
                self.pos,
            )
        return dense_type

    def _parse_tensor_literal_element(self) -> Parser._TensorLiteralElement:
        element = super()._parse_tensor_literal_element()
        if element.span.text.lstrip("-").startswith(("0x", "0X")):
            return _HexElement(element.is_negative, element.value, element.span)
        return element

    def parse_optional_builtin_int_or_float_attr(self) -> IntegerAttr | FloatAttr | None:
        """xDSL reads `-0x7F800000 : f32` as the value -2139095040.0; MLIR refuses it."""
        start = self.pos
        attribute = super().parse_optional_builtin_int_or_float_attr()
        if isinstance(attribute, FloatAttr) and _NEGATIVE_HEX.match(
            self.lexer.input.content, start
        ):
            self.raise_error(
                "a hexadecimal float literal gives the value's bits; it cannot be negative",
                start,
                self.pos,
            )
        return attribute

    def parse_optional_float(self, *, allow_negative: bool = True) -> float | None:
        """Also a hexadecimal literal of 8 or 16 digits: the bits of an f32 or f64, as MLIR
        and xDSL print NaN, ±Inf and some large values (`nn.clip %x max 0x7F800000`)."""
        token = self._current_token
        if token.kind != MLIRTokenKind.INTEGER_LIT or not token.text.startswith(("0x", "0X")):
            return super().parse_optional_float(allow_negative=allow_negative)
        float_type = {8: f32, 16: f64}.get(len(token.text) - 2)
        if float_type is None:
            self.raise_error(
                "a hexadecimal float literal gives the bits of an f32 (8 digits) "
                "or an f64 (16 digits)",
                token.span.start,
                token.span.end,
            )
        self._consume_token(MLIRTokenKind.INTEGER_LIT)
        return _float_from_bits(int(token.text, 16), float_type)

    def parse_dense_int_or_fp_elements_attr(
        self, type: RankedStructure[Attribute] | None
    ) -> DenseIntOrFPElementsAttr:
        """xDSL raises a bare ValueError for an integer its element type cannot hold."""
        start = self.pos
        try:
            return super().parse_dense_int_or_fp_elements_attr(type)  # type: ignore[arg-type]
        except ValueError as error:
            self.raise_error(str(error), start, self.pos)

    def parse_operation(self) -> Operation:
        span = self._current_token.span
        try:
            op = super().parse_operation()
        except VerifyException as error:
            # An attribute that failed its own verification while being parsed.
            self.raise_error(str(error).split("\n\n")[0], span.start, span.end)
        except struct.error as error:  # xDSL packing an array literal, e.g. [99999999999999999999]
            self.raise_error(f"an integer does not fit its type ({error})", span.start, span.end)
        if not isinstance(op.location, UnknownLoc):
            return op  # an explicit loc(...) in the source wins
        line, column = self._line_and_column(span.start)
        op.location = FileLineColLoc(
            StringAttr(self.lexer.input.name), IntAttr(line), IntAttr(column)
        )
        return op

    def _get_op_by_name(self, name: str) -> type[Operation]:
        """Unknown ops are reported at their name, not at the token after it."""
        found = self.ctx.get_optional_op(name, dialect_stack=self._parser_state.dialect_stack)
        if found is None:
            end = self._current_token.span.start
            start = self.lexer.input.content.rfind(name, 0, end)
            self.raise_error(f"Operation {name} is not registered", start, start + len(name))
        return found


def _float_from_bits(bits: int, float_type: AnyFloat) -> float:
    return float_type.unpack(bits.to_bytes(float_type.compile_time_size, "little"), 1)[0]


class _HexElement(Parser._TensorLiteralElement):
    """A hexadecimal element of a dense literal: for a float element type, the element's
    bits (how MLIR and xDSL print NaN and ±Inf), not an integer value to convert; xDSL
    reads `dense<[0x7F800000]> : tensor<1xf32>` as 2139095040.0."""

    def to_type(self, parser: AttrParser, type: Attribute) -> object:
        if not isinstance(type, AnyFloat):
            return super().to_type(parser, type)  # type: ignore[arg-type]
        bits = int(self.value)
        if self.is_negative:
            parser.raise_error(
                "a hexadecimal float literal gives the element's bits; it cannot be negative",
                at_position=self.span,
            )
        if bits >= 1 << type.bitwidth:
            parser.raise_error(
                f"a hexadecimal literal has more bits than its element type {type}",
                at_position=self.span,
            )
        return _float_from_bits(bits, type)


def _closing_angle(text: str, start: int) -> int:
    """The offset just past the `>` closing the `<` at `start` (skipping string literals), or
    0 when `text[start]` is not `<` or the bracket is not closed."""
    if not text.startswith("<", start):
        return 0
    depth, index = 0, start
    while (found := _ANGLE_OR_QUOTE.search(text, index)) is not None:
        index = found.end()
        if found.group() == '"':
            if (tail := _STRING_TAIL.match(text, index)) is None:
                return 0
            index = tail.end()
        elif found.group() == "<":
            depth += 1
        elif (depth := depth - 1) == 0:
            return index
    return 0


def location_of(op: Operation) -> Location | None:
    if isinstance(op.location, FileLineColLoc):
        return Location(op.location.filename.data, op.location.line.data, op.location.column.data)
    return None


def source_line(text: str | None, location: Location | None) -> str | None:
    if text is None or location is None:
        return None
    lines = text.splitlines()
    return lines[location.line - 1] if 0 < location.line <= len(lines) else None


def error_at(op: Operation, message: str, text: str | None = None) -> UserError:
    location = location_of(op)
    return UserError(message, location, source_line(text, location), op)


def _visible(message: str) -> str:
    """xDSL's "Unexpected character: X" with an invisible X (a byte-order mark, a control
    character) named by its code point."""
    found = _UNEXPECTED_CHARACTER.fullmatch(message)
    if found is None or found.group(1).isprintable():
        return message
    return f"Unexpected character U+{ord(found.group(1)):04X}"


def parse_module(ctx: Context, text: str, name: str) -> ModuleOp:
    """Parses `text` (named `name` in messages); raises UserError on a syntax error."""
    try:
        parser = LocatedParser(ctx, text, name)  # reads the first token: it may be bad
        return parser.parse_module()
    except ParseError as error:
        where = error.span.get_location()
        location = Location(where.file, where.line, where.col)
        raise UserError(_visible(error.msg), location, source_line(text, location)) from None
    except AssertionError as error:  # xDSL asserts on some malformed input: make it an error
        found = _UNEXPECTED_TOKEN.match(str(error))
        if found is None:
            raise
        got, offset, kind = found.groups()
        value = MLIRTokenKind[kind].value  # the text of punctuation, else an object
        expected = f"'{value}'" if isinstance(value, str) else kind.lower()
        location = Location(name, *parser._line_and_column(int(offset)))
        raise UserError(
            f"expected {expected}, got '{got}'", location, source_line(text, location)
        ) from None
    except RecursionError:  # xDSL's parser recurses once per nesting level
        location = Location(name, *parser._line_and_column(parser.pos))
        raise UserError(
            "the input is nested too deeply to parse (Python's recursion limit "
            f"is {sys.getrecursionlimit()})",
            location,
        ) from None


def _first_message(error: Exception) -> str:
    """The first paragraph of an exception's message, on one line."""
    first = str(error).split("\n\n")[0]
    return " ".join(line.strip() for line in first.splitlines() if line.strip()) or (
        type(error).__name__
    )


def verify_module(module: ModuleOp, text: str | None = None) -> None:
    """Verifies `module`; on failure raises a UserError located at the innermost failing op."""
    try:
        module.verify()
    except VerifyException:
        for op in module.walk(region_first=True):
            try:
                op.verify(verify_nested_ops=False)
            except VerifyException as error:
                raise _redefinition(op, error, text) or error_at(
                    op, _first_message(error), text
                ) from None
        raise
    _check_signatures(module, text)
    _check_defined_before_use(module, text)


def _check_signatures(module: ModuleOp, text: str | None) -> None:
    """The tensor encodings of each function's arguments and results are ours and fit their
    tensors' ranks. xDSL checks none there, so `tensor<2x3xf32, #layout.layout<"NCHW">>`
    verified, and a pass or the runner reading it failed later with no location."""
    for op in module.walk():
        if not isinstance(op, func.FuncOp):
            continue
        signature = op.function_type
        names = [arg.name_hint for arg in op.args] if op.body.blocks else []
        for kind, types in (("argument", signature.inputs), ("result", signature.outputs)):
            for index, value_type in enumerate(types.data):
                if not isinstance(value_type, TensorType):
                    continue
                what = f"@{op.sym_name.data}: {kind} {index + 1}"
                if kind == "argument" and index < len(names) and names[index]:
                    what += f" (%{names[index]})"
                try:
                    verify_encoding(value_type, what)
                except VerifyException as error:
                    raise error_at(op, str(error), text) from None


def _redefinition(table: Operation, error: VerifyException, text: str | None) -> UserError | None:
    """xDSL blames a symbol defined twice on the symbol table (often the implicit module,
    which has no location); this error is at the second definition, naming the first."""
    found = _REDEFINITION.fullmatch(str(error))
    if found is None or not table.regions or not table.regions[0].blocks:
        return None
    first = None
    for op in table.regions[0].blocks[0].ops:
        name = op.get_attr_or_prop("sym_name")
        if isinstance(name, StringAttr) and name.data == found.group(1):
            if first is not None:
                where = location_of(first)
                also = f" (first defined at {where})" if where is not None else ""
                return error_at(op, f"redefinition of symbol @{name.data}{also}", text)
            first = op
    return None


def _check_defined_before_use(module: ModuleOp, text: str | None) -> None:
    """Within a block, every operand made by an op of that block is made by an earlier op
    (xDSL does not check dominance: `%1 = nn.relu %1` parses and verifies)."""
    for block in (b for op in module.walk() for region in op.regions for b in region.blocks):
        defined: set[SSAValue] = set()
        for op in block.ops:
            for index, operand in enumerate(op.operands):
                owner = operand.owner
                if (
                    isinstance(owner, Operation)
                    and owner.parent is block
                    and operand not in defined
                ):
                    raise error_at(
                        op,
                        f"operand {index} of {op.name} is used before it is "
                        "defined (by this op or a later one)",
                        text,
                    )
            defined.update(op.results)


class DiagnosticError(DiagnosticException):
    """Raised by passes for problems in the program (not bugs): carries the op to blame."""

    def __init__(self, op: Operation, message: str):
        super().__init__(message)
        self.op = op
        self.message = message


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
    in each number given to a float option (`factor=2` -> `factor=2.0`; xDSL said
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
    if "" in names:  # `--print-ir-after=` or `a,,b`: it printed nothing, silently
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
    A file named twice runs once (its passes were "already registered")."""
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


def parse_pipeline(spec: str, available: dict[str, Callable[[], type[ModulePass]]]) -> PassPipeline:
    """Parses `pass-a, pass-b{opt=v}`; unknown passes, bad options and an option given twice
    (xDSL would keep the last) become UserErrors."""
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
    return pipeline


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
                    raise UserError(f"{name}: {_first_message(error)}") from None
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


class _TypeCachingPrinter(Printer):
    """xDSL's printer, writing the text of each distinct tensor type once and then reusing
    it (types are about 40% of the printing time of a large model)."""

    _tensor_texts: dict[Attribute, str] | None = None

    def print_attribute(self, attribute: Attribute) -> None:
        if not isinstance(attribute, TensorType):
            super().print_attribute(attribute)
            return
        if self._tensor_texts is None:
            self._tensor_texts = {}
        if (text := self._tensor_texts.get(attribute)) is None:
            out = StringIO()
            Printer(stream=out, print_generic_format=self.print_generic_format).print_attribute(
                attribute
            )
            text = self._tensor_texts[attribute] = out.getvalue()
        self.print_string(text)


def print_module(module: ModuleOp, stream: IO[str], generic: bool = False) -> None:
    _TypeCachingPrinter(stream=stream, print_generic_format=generic).print_op(module)
    stream.write("\n")


def split_input(text: str) -> list[str]:
    """Splits at `// -----` lines (the marker alone on its line: a `// ------ helpers` banner
    does not split); each chunk keeps its line numbers (it is prefixed with the newlines of
    the chunks before it), so that locations refer to the whole file."""
    chunks: list[str] = []
    consumed_lines = 0
    for chunk in _SPLIT_LINE.split(text):
        chunks.append("\n" * consumed_lines + chunk)
        consumed_lines += chunk.count("\n")
    return chunks


def os_error_reason(error: OSError) -> str:
    """What went wrong, without the path (messages name it once): `no such file or
    directory`, as the rest of a message after a colon is in lower case."""
    reason = error.strerror or str(error)
    return reason[:1].lower() + reason[1:]


def read_text(path: str) -> tuple[str, str]:
    """Reads an input file (`-` is stdin) as UTF-8; returns (text, name for messages). An
    ONNX model (by its name, or by its bytes: on stdin, or under another name) is refused
    with the command that imports it: its bytes may well be UTF-8, and the parser would
    stop at the first control character. A path that names no file is reported as such,
    whatever its name."""
    name = "<stdin>" if path == "-" else path
    model_here = f"'{path}' is an ONNX model; import it first: nnlayout-import {path} -o MODEL.mlir"
    if path.lower().endswith(".onnx") and os.path.isfile(path):
        raise UserError(model_here)
    try:
        if path == "-":
            if sys.stdin is None:  # the process was started with fd 0 closed
                raise UserError("cannot read '<stdin>': stdin is closed")
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as handle:
                data = handle.read()
    except OSError as error:
        raise UserError(f"cannot read '{name}': {os_error_reason(error)}") from None
    if is_onnx_model(data):
        raise UserError(
            "stdin holds an ONNX model; save it to a file and import it: "
            "nnlayout-import MODEL.onnx -o MODEL.mlir"
            if path == "-"
            else model_here
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UserError(
            f"cannot read '{name}': not UTF-8 text (byte "
            f"0x{data[error.start]:02x} at offset {error.start})"
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n"), name  # as text mode reads it


def is_onnx_model(data: bytes) -> bool:
    """Whether `data` is a serialised ONNX model: it starts with the tag of ir_version, its
    first field (no MLIR text starts with that control character, so only such bytes pay
    for importing onnx), and parses as a model (the importer's check)."""
    if not data.startswith(b"\x08"):
        return False
    from nnlayout.frontends.onnx import parses_as_model

    return parses_as_model(data)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Writes an output file as UTF-8; an unwritable path is a UserError naming it."""
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as error:
        raise UserError(f"cannot write '{path}': {os_error_reason(error)}") from None


def names_a_file(path: str | os.PathLike[str]) -> bool:
    """Whether writing `path` makes or replaces a regular file (not /dev/stdout, a folder)."""
    return os.path.isfile(path) or not os.path.exists(path)


def refuse_overwriting_inputs(
    outputs: Sequence[str | os.PathLike[str]], inputs: Sequence[str | os.PathLike[str] | None]
) -> None:
    """Refuses to write any of `outputs` over one of `inputs` (the input file, its weights):
    that would destroy what the tool read. `-`, None and devices (/dev/stdout) are no files."""
    sources = {Path(p).resolve() for p in inputs if p and p != "-"}
    for written in outputs:
        if names_a_file(written) and Path(written).resolve() in sources:
            raise UserError(f"'{written}' would overwrite an input; choose another -o name")


def read_module(path: str) -> tuple[Context, ModuleOp, str]:
    """Reads, parses and verifies the module in `path` (`-` is stdin): the context it was
    parsed in, the module, and its text (to locate later errors in)."""
    text, name = read_text(path)
    ctx = make_context()
    module = parse_module(ctx, text, name)
    verify_module(module, text)
    return ctx, module, text


def traceback_requested(argv: Sequence[str]) -> bool:
    return "--traceback" in argv or os.environ.get("NNLAYOUT_TRACEBACK") == "1"


def run_tool(main: Callable[[Sequence[str]], int], argv: Sequence[str] | None = None) -> int:
    """Runs a tool's main; user errors print one diagnostic to stderr and return 1."""
    args = list(sys.argv[1:] if argv is None else argv)
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
        sys.stdout.flush()  # a closed pipe shows here, not in Python's own exit
        return status
    except BrokenPipeError:
        # The reader went away (`nnlayout-opt --list-passes | head`): stop quietly, as a
        # tool killed by SIGPIPE does; later writes to stdout go nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except UserError as error:
        print(error.render(), file=sys.stderr)
    except DiagnosticException as error:
        print(f"error: {_first_message(error)}", file=sys.stderr)
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
