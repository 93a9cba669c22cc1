"""Each patch of xDSL that ir/parser.py lists (in its module docstring) on a small input it
changes: without the patch, the input fails, hangs or reads otherwise. The list itself is
checked to name every override."""

from __future__ import annotations

import inspect
import math
import re
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from io import StringIO

import pytest
from xdsl.dialects.builtin import (
    BytesAttr,
    FileLineColLoc,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation
from xdsl.parser import Parser
from xdsl.printer import Printer

import nnlayout.ir.parser as located
from nnlayout.diagnostics import UserError
from nnlayout.ir import printer, verify
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import LocatedParser, parse_module
from nnlayout.ir.printer import print_module
from nnlayout.ir.verify import verify_module


def parse(text: str) -> ModuleOp:
    return parse_module(make_context(), text, "t.mlir")


def error(text: str, check: Callable[[ModuleOp], None] = lambda module: None) -> str:
    """The first line of the error parsing `text` (then `check` on the module) raises."""
    with pytest.raises(UserError) as raised:
        check(parse(text))
    return raised.value.render().splitlines()[0]


def ops(module: ModuleOp, name: str) -> list[Operation]:
    return [op for op in module.walk() if op.name == name]


def function(body: str, signature: str = "() -> ()") -> str:
    arguments, results = signature.split(" -> ")
    returned = "" if results == "()" else " %0 : " + results
    return f"func.func @f{arguments} -> {results} {{\n{body}  func.return{returned}\n}}\n"


def test_every_override_is_listed() -> None:
    """Each method or attribute a patch class redefines from its xDSL base is named in the
    list, and each name the list gives exists."""
    classes = [
        located._Lexer,
        located.LocatedParser,
        located._HexElement,
        located._alloc_op(),
        printer._TypeCachingPrinter,
    ]
    overrides = {
        f"{cls.__name__}.{name}"
        for cls in classes
        for name in vars(cls)
        if not name.startswith(("__", "_abc"))
        and any(hasattr(base, name) for base in cls.__bases__)
    }
    listed = located.__doc__ or ""
    assert sorted(name for name in overrides if f"`{name}`" not in listed) == []
    for name in ("_UNEXPECTED_CHARACTER", "_UNEXPECTED_TOKEN"):
        assert hasattr(located, name) and f"`{name}`" in listed
    assert hasattr(verify, "_REDEFINITION") and "`_REDEFINITION`" in listed


@contextmanager
def seconds_at_most(limit: int) -> Iterator[None]:
    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"took more than {limit} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(limit)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_unterminated_string_fails_at_once() -> None:
    """`_Lexer._unescaped_characters_regex`: xDSL's pattern takes hours on this line."""
    text = 'func.func "main(' + "x" * 60 + "\n"
    with seconds_at_most(10):
        message = error(text)
    assert message == "t.mlir:1:11: error: End of file reached before closing string literal."


@pytest.mark.parametrize(
    ("prefix", "example"),
    [
        ("%", ' (e.g. %x, %0; quoted names such as %"x y" are not MLIR)'),
        ("^", " (e.g. ^bb0)"),
        ("#", ' (e.g. #layout.layout<"NCHW8c">)'),
        ("!", ""),
    ],
)
def test_prefix_without_a_name_is_named(prefix: str, example: str) -> None:
    """`_Lexer._lex_prefixed_ident`: xDSL's message kept its placeholder `{first_char}`."""
    message = error(f"func.func @f() {{\n  {prefix} \n}}\n")
    assert message == f"t.mlir:2:3: error: expected a name or a number after '{prefix}'{example}"


def test_escaped_utf8_string_reads_back_as_the_string() -> None:
    """`_Lexer._lex_string_literal`: what the printer writes for a non-ASCII string reads back
    as that string (xDSL: bytes); escapes that are not UTF-8 stay bytes."""
    module = parse('func.func @f() attributes {w = "modèle.npz"} {\n  func.return\n}\n')
    out = StringIO()
    print_module(module, out)
    assert '"mod\\C3\\A8le.npz"' in out.getvalue()
    (again,) = ops(parse(out.getvalue()), "func.func")
    assert again.attributes["w"] == StringAttr("modèle.npz")
    (raw,) = ops(parse('func.func @f() attributes {b = "\\FF"} {\n  func.return\n}\n'), "func.func")
    assert raw.attributes["b"] == BytesAttr(b"\xff")


def test_ops_are_located() -> None:
    """`LocatedParser.parse_operation`: every op gets its line and column (xDSL: UnknownLoc);
    an explicit loc(...) is kept."""
    text = function(
        "  %0 = nn.relu %x : tensor<2xf32>\n"
        '    %1 = nn.neg %0 : tensor<2xf32> loc("model.onnx":7:1)\n',
        "(%x: tensor<2xf32>) -> tensor<2xf32>",
    )
    module = parse(text)
    places = {
        op.name: (op.location.filename.data, op.location.line.data, op.location.column.data)
        for op in module.walk()
        if isinstance(op.location, FileLineColLoc)
    }
    assert places == {
        "func.func": ("t.mlir", 1, 1),
        "nn.relu": ("t.mlir", 2, 3),
        "nn.neg": ("model.onnx", 7, 1),
        "func.return": ("t.mlir", 4, 3),
    }


def test_attribute_failing_its_verification_is_located() -> None:
    """`LocatedParser.parse_operation`: xDSL raises a bare VerifyException."""
    assert error(function("  %c = arith.constant 300 : i8\n")) == (
        "t.mlir:2:3: error: Integer value 300 is out of range for type i8 which supports "
        "values in the range [-128, 256)"
    )


def test_integer_array_too_large_to_pack_is_located() -> None:
    """`LocatedParser.parse_operation`: xDSL raises struct.error packing the array."""
    body = (
        "  %0 = nn.max_pool2d %x kernel [99999999999999999999, 1] strides [1, 1] "
        "pads [0, 0, 0, 0] : tensor<1x1x4x4xf32> -> tensor<1x1x4x4xf32>\n"
    )
    signature = "(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>"
    assert error(function(body, signature)) == (
        "t.mlir:2:3: error: an integer does not fit its type (argument out of range)"
    )


def test_unknown_op_is_reported_at_its_name() -> None:
    """`LocatedParser._get_op_by_name`: xDSL points at `%x`, the token after the name."""
    text = function(
        "  %0 = nn.frobnicate %x : tensor<2xf32>\n", "(%x: tensor<2xf32>) -> tensor<2xf32>"
    )
    assert error(text) == "t.mlir:2:8: error: Operation nn.frobnicate is not registered"


@pytest.mark.parametrize("text", ["", "// a comment only\n", "\n  \n"])
def test_input_without_operations_is_an_empty_module(text: str) -> None:
    """`LocatedParser.parse_module`: xDSL says "Could not parse entire input!"."""
    module = parse(text)
    assert isinstance(module, ModuleOp) and list(module.body.block.ops) == []


def test_undefined_value_is_reported_at_its_first_use() -> None:
    """`LocatedParser.parse_module`: xDSL points at the end of the input."""
    text = function(
        "  %0 = nn.relu %y : tensor<2xf32>\n  %1 = nn.neg %z : tensor<2xf32>\n",
        "(%x: tensor<2xf32>) -> tensor<2xf32>",
    )
    assert error(text).startswith("t.mlir:2:3: error: values used but not defined: [%")


def test_unclosed_region_says_what_is_expected() -> None:
    """`LocatedParser._parse_block`: xDSL says " in block definition"."""
    text = "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n  func.return %x : tensor<2xf32>\n"
    assert error(text) == (
        "t.mlir:3:1: error: expected '}' to close the region (or a block label such as ^bb1:)"
    )


@pytest.mark.parametrize("width", ["f80", "f128"])
def test_float_types_xdsl_cannot_hold_are_refused(width: str) -> None:
    """`LocatedParser.parse_optional_type`: xDSL raises NotImplementedError on the constant."""
    text = function(f"  %0 = arith.constant dense<1.0> : tensor<2x{width}>\n")
    assert (
        error(text)
        == f"t.mlir:2:45: error: {width} is not supported (xDSL holds no {width} values)"
    )


def test_each_tensor_spelling_is_parsed_once() -> None:
    """`LocatedParser.parse_optional_type`: ops spelling the same tensor type share one object
    (xDSL builds one per occurrence); a type spelled otherwise is its own."""
    text = function(
        "  %a = nn.relu %x : tensor<2x3xf32>\n"
        "  %0 = nn.neg %a : tensor<2x3xf32>\n"
        '  %b = nn.relu %y : tensor<2x3xf32, #layout.layout<"NC">>\n',
        '(%x: tensor<2x3xf32>, %y: tensor<2x3xf32, #layout.layout<"NC">>) -> tensor<2x3xf32>',
    )
    module = parse(text)
    relu, neg = ops(module, "nn.relu")[0], ops(module, "nn.neg")[0]
    assert relu.results[0].type is neg.results[0].type
    assert ops(module, "nn.relu")[1].results[0].type != relu.results[0].type


def test_decimal_integer_lists_are_read_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`LocatedParser.parse_comma_separated_list`: a bracketed decimal list never reaches
    xDSL's token-by-token loop; other lists still do, and read as xDSL reads them."""
    xdsl_list = Parser.parse_comma_separated_list
    calls: list[str] = []

    def counted(self: Parser, *args: object, **kwargs: object) -> object:
        calls.append(self.lexer.input.content[self.pos :])
        return xdsl_list(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Parser, "parse_comma_separated_list", counted)
    parser = LocatedParser(make_context(), "[2, -3 , 40]")
    assert parser.parse_comma_separated_list(Parser.Delimiter.SQUARE, parser.parse_integer) == [
        2,
        -3,
        40,
    ]
    assert calls == []
    for text, expected in (("[0x10, 1]", [16, 1]), ("[]", [])):
        parser = LocatedParser(make_context(), text)
        found = parser.parse_comma_separated_list(Parser.Delimiter.SQUARE, parser.parse_integer)
        assert found == expected
    assert len(calls) == 2


def test_splat_beyond_memory_is_refused_at_its_type() -> None:
    """`LocatedParser._parse_dense_literal_type`: xDSL allocates the splat's list first."""
    shape = "1000000x1000000"
    text = function(f"  %0 = nn.constant dense<1.0> : tensor<{shape}xf32>\n")
    assert error(text).startswith(
        f"t.mlir:2:33: error: dense literal of type tensor<{shape}xf32> has 1,000,000,000,000 "
        "elements; parsing it needs 12,000,000,000,000 bytes (10.9 TiB), more than this "
        "machine's memory ("
    )


@pytest.mark.parametrize(
    ("literal_type", "message"),
    [
        ("f32", "Expected memref, vector or tensor type of integer, index, float, or complex type"),
        ("tensor<?xf32>", "Dense literal attribute should have a static shape."),
    ],
)
def test_dense_literal_type_checks_say_what_xdsl_says(literal_type: str, message: str) -> None:
    """`LocatedParser._parse_dense_literal_type` makes xDSL's two checks itself, in its words."""
    text = function(f"  %0 = nn.constant dense<1.0> : {literal_type}\n")
    assert error(text) == f"t.mlir:2:20: error: {message}"
    with pytest.raises(Exception, match=message.replace(".", r"\.")):
        Parser(make_context(), text).parse_module()


def test_hexadecimal_float_elements_are_bits() -> None:
    """`LocatedParser._parse_tensor_literal_element`, `_HexElement.to_type`: xDSL reads
    0x7F800000 as the number 2139095040.0; an integer element stays a number."""
    text = function(
        "  %0 = nn.constant dense<[0x7F800000, 0xFF800000, 0x7FC00000, 1.5]> : tensor<4xf32>\n"
        "  %1 = nn.constant dense<[0x10]> : tensor<1xi32>\n"
    )
    floats, integers = (op.properties["value"] for op in ops(parse(text), "nn.constant"))
    values = floats.get_values()  # type: ignore[attr-defined]
    assert values[0] == math.inf and values[1] == -math.inf and math.isnan(values[2])
    assert values[3] == 1.5
    assert integers.get_values() == (16,)  # type: ignore[attr-defined]


def test_hexadecimal_float_element_errors() -> None:
    """`_HexElement.to_type`: bits are never negative, nor wider than the element type."""
    negative = function("  %0 = nn.constant dense<[-0x7F800000, 1.0]> : tensor<2xf32>\n")
    assert error(negative) == (
        "t.mlir:2:27: error: a hexadecimal float literal gives the element's bits; it cannot "
        "be negative"
    )
    wide = function("  %0 = nn.constant dense<[0x7FF0000000000000, 1.0]> : tensor<2xf32>\n")
    assert error(wide) == (
        "t.mlir:2:27: error: a hexadecimal literal has more bits than its element type f32"
    )


@pytest.mark.parametrize(
    ("bound", "expected"), [("0x7F800000", math.inf), ("0xFFF0000000000000", -math.inf)]
)
def test_hexadecimal_float_is_the_bits_of_an_f32_or_f64(bound: str, expected: float) -> None:
    """`LocatedParser.parse_optional_float`: xDSL says "Expected float literal"."""
    body = f"  %0 = nn.clip %x max {bound} : tensor<4xf32>\n"
    (clip,) = ops(parse(function(body, "(%x: tensor<4xf32>) -> tensor<4xf32>")), "nn.clip")
    (value,) = [a for a in clip.properties.values() if isinstance(a, FloatAttr)]
    assert value.value.data == expected


def test_hexadecimal_float_of_another_width_is_refused() -> None:
    """`LocatedParser.parse_optional_float`."""
    body = "  %0 = nn.clip %x max 0x7F80 : tensor<4xf32>\n"
    assert error(function(body, "(%x: tensor<4xf32>) -> tensor<4xf32>")) == (
        "t.mlir:2:23: error: a hexadecimal float literal gives the bits of an f32 (8 digits) "
        "or an f64 (16 digits)"
    )


def test_negative_hexadecimal_float_is_refused() -> None:
    """`LocatedParser.parse_optional_builtin_int_or_float_attr`: xDSL reads -2139095040.0."""
    assert error(function("  %c = arith.constant -0x7F800000 : f32\n")) == (
        "t.mlir:2:23: error: a hexadecimal float literal gives the value's bits; it cannot be "
        "negative"
    )


def test_dense_integer_out_of_range_is_located() -> None:
    """`LocatedParser.parse_dense_int_or_fp_elements_attr`: xDSL raises a bare ValueError."""
    text = function("  %0 = nn.constant dense<99999999999999999999999> : tensor<2xi32>\n")
    assert error(text) == (
        "t.mlir:2:25: error: Integer value 99999999999999999999999 is out of range for type i32 "
        "which supports values in the range [-2147483648, 4294967296)"
    )


@pytest.mark.parametrize(("character", "named"), [("\ufeff", "U+FEFF"), ("\x01", "U+0001")])
def test_invisible_unexpected_character_is_named(character: str, named: str) -> None:
    """`_UNEXPECTED_CHARACTER`: xDSL's message shows the character itself."""
    assert error(character + function("")) == f"t.mlir:1:1: error: Unexpected character {named}"


def test_failed_assertion_on_a_token_is_an_error() -> None:
    """`_UNEXPECTED_TOKEN`: xDSL fails an assertion on this literal."""
    text = function("  %0 = nn.constant dense<[1.0, (2.0, 3.0, 4.0)]> : tensor<2xf32>\n")
    assert error(text) == "t.mlir:2:41: error: expected ')', got ','"


def test_input_nested_too_deeply_is_an_error() -> None:
    """RecursionError: xDSL's parser recurses once per nesting level."""
    depth = 5000
    text = function(f"  %0 = nn.constant dense<{'[' * depth}1.0{']' * depth}> : tensor<1xf32>\n")
    assert "error: the input is nested too deeply to parse (Python's recursion limit" in error(text)


def test_each_tensor_type_is_printed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`_TypeCachingPrinter.print_attribute`: xDSL's printer is asked for each distinct tensor
    type once; the text is xDSL's."""
    text = function(
        "  %a = nn.relu %x : tensor<2x3xf32>\n  %0 = nn.neg %a : tensor<2x3xf32>\n",
        "(%x: tensor<2x3xf32>) -> tensor<2x3xf32>",
    )
    module = parse(text)
    expected = StringIO()
    Printer(stream=expected).print_op(module)
    xdsl_print = Printer.print_attribute
    printed: list[Attribute] = []

    def counted(self: Printer, attribute: Attribute) -> None:
        if isinstance(attribute, TensorType):
            printed.append(attribute)
        xdsl_print(self, attribute)

    monkeypatch.setattr(Printer, "print_attribute", counted)
    out = StringIO()
    print_module(module, out)
    assert out.getvalue() == expected.getvalue() + "\n"
    assert len(printed) == 1


PLANNED = """
func.func @f(%x: memref<1x2x3x3xf32>, %n: index) -> memref<1x2x3x3xf32> {
  %arena = memref.alloc() {alignment = 64 : i64} : memref<512xi8>
  %c0 = arith.constant 0 : index
  %v = memref.view %arena[%c0][] : memref<512xi8> to memref<1x2x3x3xf32>
  %d = memref.view %arena[%c0][%n] : memref<512xi8> to memref<?x2x3x3xf32>
  %e = memref.view %arena[%c0][%n, %n] {note = 1 : i64} : memref<512xi8> to memref<?x2x?x3xf32>
  nn.compute ins(%x : memref<1x2x3x3xf32>) outs(%v : memref<1x2x3x3xf32>) {
  ^bb0(%a: tensor<1x2x3x3xf32>):
    %r = nn.relu %a {kernel = #nn.kernel<"relu_onednn", operands = ["*"], results = ["*"]>} : tensor<1x2x3x3xf32>
    nn.yield %r : tensor<1x2x3x3xf32>
  }
  nn.compute ins(%v : memref<1x2x3x3xf32>) outs(%v : memref<1x2x3x3xf32>) {
  ^bb0(%a: tensor<1x2x3x3xf32>):
    %r = nn.sigmoid %a : tensor<1x2x3x3xf32>
    nn.yield %r {note = 2 : i64} : tensor<1x2x3x3xf32>
  }
  func.return %v : memref<1x2x3x3xf32>
}
"""


@pytest.mark.parametrize("generic", [False, True])
def test_repeated_ops_print_as_xdsl_prints_them(generic: bool) -> None:
    """`_TypeCachingPrinter.print_op` prints `memref.view` (with and without sizes and
    attributes), `nn.yield` and unary `nn` ops (with and without attributes) directly, and
    `_TypeCachingPrinter.print_string` writes fragments directly: the text is xDSL's."""
    module = parse(PLANNED)
    expected = StringIO()
    Printer(stream=expected, print_generic_format=generic).print_op(module)
    out = StringIO()
    print_module(module, out, generic=generic)
    assert out.getvalue() == expected.getvalue() + "\n"
    assert ("memref.view %arena[%c0][%n, %n] {note = 1 : i64}" in out.getvalue()) != generic


ALLOCS = (
    "  %a = memref.alloc() alignment = 64 : memref<16xi8>\n"
    "  %b = memref.alloc() {alignment = 64 : i64, note = 1 : i64} : memref<16xi8>\n"
    "  %c = memref.alloc() : memref<16xi8>\n"
)


def test_alloc_reads_the_alignment_as_mlir_and_xdsl_print_it() -> None:
    """`_AllocOp.parse` (memref.alloc): xDSL's parser refuses MLIR's `alignment = 64`
    ("Expected ':'"); both spellings read as the same op."""
    with pytest.raises(Exception, match="Expected ':'"):
        Parser(make_context(), function(ALLOCS)).parse_module()
    a, b, c = ops(parse(function(ALLOCS)), "memref.alloc")
    assert a.alignment == b.alignment == IntegerAttr(64, 64)  # type: ignore[attr-defined]
    assert c.alignment is None and "note" in b.attributes  # type: ignore[attr-defined]


def test_mlir_compatible_prints_as_mlir_reads() -> None:
    """`_TypeCachingPrinter.print_op` with `mlir_compatible`: xDSL prints `{alignment = 64 :
    i64}`, which MLIR refuses, and nn ops in their custom form, which MLIR cannot read; we
    print MLIR's keyword form of the alignment (other attributes stay in the dictionary), an
    nn op in the generic form, func and memref ops custom. The default print is xDSL's (what
    xdsl-opt reads)."""
    module = parse(
        function(
            ALLOCS + "  %0 = nn.relu %x : tensor<2x3xf32>\n",
            "(%x: tensor<2x3xf32>) -> tensor<2x3xf32>",
        )
    )
    xdsl_text, default, compatible = StringIO(), StringIO(), StringIO()
    Printer(stream=xdsl_text).print_op(module)
    print_module(module, default)
    assert default.getvalue() == xdsl_text.getvalue() + "\n"
    print_module(module, compatible, mlir_compatible=True)
    text = compatible.getvalue()
    assert text.splitlines()[2:6] == [
        "    %a = memref.alloc() alignment = 64 : memref<16xi8>",
        "    %b = memref.alloc() alignment = 64 {note = 1 : i64} : memref<16xi8>",
        "    %c = memref.alloc() : memref<16xi8>",
        '    %0 = "nn.relu"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>',
    ]
    assert "func.func @f(" in text
    assert parse(text).is_structurally_equivalent(module)


def test_verify_reports_the_innermost_failing_op() -> None:
    """`verify_module`: xDSL prints the module; the error is at the op, in one line."""
    text = function(
        "  %0 = nn.softmax %x axis 5 : tensor<2x3xf32>\n",
        "(%x: tensor<2x3xf32>) -> tensor<2x3xf32>",
    )
    assert error(text, verify_module).startswith("t.mlir:2:3: error: nn.softmax: ")


def test_symbol_defined_twice_is_reported_at_the_second() -> None:
    """`_REDEFINITION`: xDSL blames the implicit module, which has no location."""
    text = function("") + function("")
    assert error(text, verify_module) == (
        "t.mlir:4:1: error: redefinition of symbol @f (first defined at t.mlir:1:1)"
    )


def test_every_listed_patch_has_a_test() -> None:
    """Each entry of the list is named by the docstring of a test here."""
    tested = " ".join(
        inspect.getdoc(test) or ""
        for name, test in globals().items()
        if name.startswith("test_") and callable(test)
    )
    heads = [
        line[2:].split(":")[0]
        for line in (located.__doc__ or "").splitlines()
        if line.startswith("- ")
    ]
    names = [name for head in heads for name in re.findall(r"`([^`]+)`", head) or [head]]
    assert names
    assert [name for name in names if name not in tested] == []
