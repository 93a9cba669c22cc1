"""The located parser: xDSL's parser, recording each op's file:line:col and patched where
nnlayout needs other behaviour; and splitting input files at `// -----` as mlir-opt's
--split-input-file does.

Every patch of xDSL in ir/ is listed here: what xDSL does, what we do instead, and why. Each is
tested in tests/ir/test_ir.py, which also checks that every override is listed.

Lexing (`_Lexer`, of xDSL's MLIRLexer):

- `_Lexer._unescaped_characters_regex`: xDSL's string-literal pattern nests `+` in `*`, which
  backtracks exponentially on an unterminated string; ours is possessive, so that a stray `"`
  is an error at once.
- `_Lexer._lex_prefixed_ident`: for a `%`, `^`, `#` or `!` with no name after it, xDSL says
  "Expected suffix identifier after {first_char}", its placeholder unfilled; we name the
  character, with an example of a name.
- `_Lexer._lex_string_literal`: xDSL reads a literal whose escapes spell non-ASCII UTF-8 as
  bytes, though its printer writes every non-ASCII string that way; we read it as the string,
  so that printed IR (a weights file named modèle.npz) reads back.

Parsing (`LocatedParser`, of xDSL's Parser):

- `LocatedParser.parse_operation`: xDSL leaves ops at UnknownLoc; we give each its file:line:col
  (an explicit loc(...) wins), from a table of line starts, so that verifier and pass errors
  point at the source. An attribute failing its verification while parsed (`arith.constant
  300 : i8`: a bare VerifyException in xDSL) and an integer array literal xDSL cannot pack (a
  struct.error) become errors located at the op.
- `LocatedParser._get_op_by_name`: xDSL reports an unregistered op at the token after its name;
  we report it at the name.
- `LocatedParser.parse_module`: xDSL refuses an input without operations ("Could not parse
  entire input!"); we read it as an empty module, as mlir-opt does. xDSL reports values used
  but never defined at the end of the input; we report them at the first op using one.
- `LocatedParser._parse_block`: xDSL says only " in block definition" where a region is not
  closed; we say that a `}` is expected.
- `LocatedParser.parse_optional_type`: xDSL parses f80 and f128 types but cannot hold their
  values (a constant of them is a NotImplementedError); we refuse them at the type. Each
  distinct `tensor<...>` spelling is parsed once and its type shared (types are immutable), for
  speed on large models.
- `LocatedParser.parse_comma_separated_list`: xDSL reads a bracketed integer list token by
  token; we read a plain decimal one with one regular expression (speed) and leave any other
  to xDSL.
- `LocatedParser._parse_dense_literal_type`: xDSL expands a splat `dense<1.0> : T` into a list
  of T's element count; we refuse a T needing more than this machine's memory, at T. xDSL's two
  other checks there are kept with its messages, their constraint built once instead of per
  literal (speed).
- `LocatedParser._parse_tensor_literal_element`, `_HexElement.to_type`: xDSL converts a
  hexadecimal element of a float dense literal as an integer (`dense<[0x7F800000]> :
  tensor<1xf32>` is 2139095040.0); we read its bits, as MLIR does and as xDSL prints NaN and
  ±Inf.
- `LocatedParser.parse_optional_float`: xDSL takes no hexadecimal float; we read 8 or 16
  hexadecimal digits as the bits of an f32 or an f64 (`nn.clip %x max 0x7F800000`, how an
  infinite bound prints).
- `LocatedParser.parse_optional_builtin_int_or_float_attr`: xDSL reads `-0x7F800000 : f32` as
  -2139095040.0; we refuse a negative hexadecimal float, as MLIR does.
- `LocatedParser.parse_dense_int_or_fp_elements_attr`: xDSL raises a bare ValueError for an
  integer its element type cannot hold; we make it an error located at the literal.
- `_AllocOp.parse` (what `LocatedParser._get_op_by_name` gives for `memref.alloc`): xDSL
  reads the alignment only in the attribute dictionary, `{alignment = 64 : i64}`, and refuses
  upstream MLIR's print of it, `memref.alloc() alignment = 64 : memref<8xi8>` ("Expected
  ':'"); we read both, so that what mlir-opt or iree-opt prints reads back.

Reading xDSL's errors (`parse_module`, which turns them into UserErrors):

- `_UNEXPECTED_CHARACTER`: xDSL's "Unexpected character: X" shows an invisible X (a byte-order
  mark, a control character) as itself; we name it by its code point.
- `_UNEXPECTED_TOKEN`: on some malformed input (`dense<[1.0, (2.0, 3.0, 4.0)]>`) xDSL fails an
  assertion naming the token; we read that text into "expected ')', got ','" at the token.
- RecursionError: xDSL's parser recurses once per nesting level; input nested deeper than
  Python's recursion limit is an error saying so, not a traceback.

Elsewhere in ir/:

- `_TypeCachingPrinter.print_attribute` (ir/printer.py): xDSL prints each tensor type afresh;
  we print each distinct one once and reuse its text, found by identity before hashing
  (speed).
- `_TypeCachingPrinter.print_string` (ir/printer.py): xDSL counts the newlines of each
  fragment it prints; we write a fragment without one directly (speed, same text).
- `_TypeCachingPrinter.print_op` (ir/printer.py): xDSL interprets an op's declarative format
  for each op; we print `memref.view`, `nn.yield` and the unary `nn` ops directly, as that
  format does (speed, same text). With `mlir_compatible` only: xDSL prints
  `memref.alloc() {alignment = 64 : i64}`, which MLIR refuses ("inherent attribute
  'alignment' cannot be parsed from attr-dict when strict properties in assembly format is
  enabled"); we print MLIR's `memref.alloc() alignment = 64`. The ops of nnlayout's own
  dialects print in the generic form, the only one in which MLIR reads an unregistered op.
- `verify_module` (ir/verify.py): xDSL reports a failing op with the whole module printed and
  no location; we report the innermost failing op at its location. xDSL blames a symbol
  defined twice on the symbol table (often the implicit module, which has no location); we
  read its message (`_REDEFINITION`) and report the second definition, naming the first. The
  module also makes the checks xDSL leaves out.
"""

from __future__ import annotations

import math
import re
import struct
import sys
from bisect import bisect_right
from collections.abc import Callable
from functools import cache
from typing import TypeVar

from xdsl.context import Context
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
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
    UnknownLoc,
    f32,
    f64,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, TypeAttribute
from xdsl.irdl import base
from xdsl.parser import AttrParser, Parser
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Input, Position
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRToken, MLIRTokenKind, StringLiteral

from nnlayout.diagnostics import Location, UserError, location_of, source_line

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
_T = TypeVar("_T")
_DENSE_LITERAL_TYPE = base(RankedStructure[IntegerType | IndexType | AnyFloat | ComplexType])


class _Lexer(MLIRLexer):
    """xDSL's lexer with a string-literal pattern that cannot backtrack (xDSL's nests `+` in
    `*`, exponential in time on an unterminated string)."""

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
        back as bytes, not as the string it printed."""
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
            # xDSL cannot pack their values: a constant of them is an internal error.
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
        from nnlayout.limits import human_bytes, memory_limit

        start = self.pos
        dense_type = self.expect(self.parse_optional_type, "Dense attribute must be typed!")
        # xDSL's own check rebuilds this constraint from the type hint on every literal; it is
        # built once here.
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
        """Unknown ops are reported at their name, not at the token after it. `memref.alloc`
        is read by `_AllocOp`, which also reads MLIR's syntax of it."""
        found = self.ctx.get_optional_op(name, dialect_stack=self._parser_state.dialect_stack)
        if found is None:
            end = self._current_token.span.start
            start = self.lexer.input.content.rfind(name, 0, end)
            self.raise_error(f"Operation {name} is not registered", start, start + len(name))
        if name == "memref.alloc":
            return _alloc_op()
        return found


@cache
def _alloc_op() -> type[Operation]:
    """xDSL's memref.alloc, reading the alignment as MLIR prints it, `memref.alloc()
    alignment = 64 : memref<8xi8>`, as well as xDSL's `{alignment = 64 : i64}` (the memref
    dialect is imported on first use: it slows every tool's start-up)."""
    from xdsl.dialects.memref import AllocOp

    class _AllocOp(AllocOp):
        @classmethod
        def parse(cls, parser: Parser) -> AllocOp:
            """xDSL reads only `{alignment = 64 : i64}` (MLIR's own print is "Expected
            ':'"); this also reads MLIR's `alignment = 64`."""
            sizes = parser.parse_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_unresolved_operand
            )
            symbols = parser.parse_optional_comma_separated_list(
                parser.Delimiter.SQUARE, parser.parse_unresolved_operand
            )
            alignment: Attribute | None = None
            if parser.parse_optional_keyword("alignment") is not None:
                parser.parse_punctuation("=")
                alignment = IntegerAttr(parser.parse_integer(allow_boolean=False), i64)
            attributes = parser.parse_optional_attr_dict()
            if "alignment" in attributes:
                alignment = attributes.pop("alignment")
            parser.parse_punctuation(":")
            result_type = parser.parse_type()
            index = IndexType()
            op = cls(
                [parser.resolve_operand(size, index) for size in sizes],
                [parser.resolve_operand(symbol, index) for symbol in symbols or []],
                result_type,
                alignment,
            )
            op.attributes |= attributes
            return op

    return _AllocOp


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
