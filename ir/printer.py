"""Printing modules, with the printed form of each type computed once, in a syntax upstream
MLIR tools (mlir-opt, iree-opt) read back.

`mlir_compatible=True` (`nnlayout-opt --print-mlir-compatible`) prints what
`mlir-opt --allow-unregistered-dialect` and `iree-opt` read:

- the ops of nnlayout's own dialects (`nn`, `layout`), which MLIR does not know, in the
  generic form (MLIR reads an unregistered op in no other), every other op in its custom form;
- `memref.alloc` as upstream MLIR spells it now, `memref.alloc() alignment = 64 :
  memref<1024xi8>`: xDSL's `{alignment = 64 : i64}` is refused by MLIR ("inherent attribute
  'alignment' cannot be parsed from attr-dict when strict properties in assembly format is
  enabled"), and MLIR's is refused by xDSL 0.75's parser, hence by `xdsl-opt`: the default
  print keeps xDSL's. ir/parser.py reads both.
"""

from __future__ import annotations

import sys
from io import StringIO
from typing import IO, Any

from xdsl.dialects.builtin import (
    IntegerAttr,
    MemRefType,
    ModuleOp,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation
from xdsl.irdl import IRDLOperation
from xdsl.printer import Printer
from xdsl.utils.identity import identity

from nnlayout.dialects.kernel_attr import KernelAttr

# The dialects of nnlayout's own, which no upstream MLIR tool registers.
OWN_DIALECTS = frozenset({"nn", "layout"})
# Attributes printed once and then reused: the types and kernel choices every op repeats.
_REPEATED = (TensorType, MemRefType, KernelAttr)


class _TypeCachingPrinter(Printer):
    """xDSL's printer, writing the text of each distinct tensor or memref type and
    `#nn.kernel` once and then reusing it (printing them is much of the printing time of a
    large model); with `mlir_syntax`, nnlayout's own ops in the generic form and
    `memref.alloc` in MLIR's syntax."""

    _tensor_texts: dict[tuple[Attribute, bool], str] | None = None
    mlir_syntax: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # (id, generic) -> (the attribute, kept alive so that its id is not reused; its text)
        self._texts_by_id: dict[tuple[int, bool], tuple[Attribute, str]] = {}

    def print_string(self, text: str, *, indent: int | None = None) -> None:
        """xDSL's, with a line's text (no newline; a text stream) written at once: printing
        calls this a dozen times per op."""
        if self._encode is identity and "\n" not in text:
            self._current_column += len(text)
            self.stream.write(text)
        else:
            super().print_string(text, indent=indent)

    def print_attribute(self, attribute: Attribute) -> None:
        # By identity first: the passes give many values one type object, and hashing an
        # xDSL attribute hashes each of its parameters (in Python code) every time.
        known = self._texts_by_id.get((id(attribute), self.print_generic_format))
        if known is not None and known[0] is attribute:
            self.print_string(known[1])
            return
        if not isinstance(attribute, _REPEATED):
            super().print_attribute(attribute)
            return
        if self._tensor_texts is None:
            self._tensor_texts = {}
        key = (attribute, self.print_generic_format)
        if (text := self._tensor_texts.get(key)) is None:
            out = StringIO()
            Printer(stream=out, print_generic_format=self.print_generic_format).print_attribute(
                attribute
            )
            text = self._tensor_texts[key] = out.getvalue()
        self._texts_by_id[(id(attribute), self.print_generic_format)] = (attribute, text)
        self.print_string(text)

    def print_op(self, op: Operation) -> None:
        """With `mlir_syntax`: an op of nnlayout's own dialects (and the ops in its regions)
        in the generic form, `memref.alloc` as MLIR spells it."""
        if self.print_generic_format or not self.mlir_syntax:
            if not self._printed_directly(op):
                super().print_op(op)
        elif op.dialect_name() in OWN_DIALECTS:
            self.print_generic_format = True
            try:
                super().print_op(op)
            finally:
                self.print_generic_format = False
        elif op.name == "memref.alloc" and _mlir_alignment(op) is not None:
            self._print_alloc(op)
        else:
            super().print_op(op)

    def _printed_directly(self, op: Operation) -> bool:
        """Prints the ops every planned program repeats (`memref.view`, `nn.yield`, a unary
        `nn` op) as their declarative assembly format does, without interpreting it (which
        cost a fifth of translating a large model); False, printing nothing, for any
        other op, or one with properties, a message or a location to print."""
        kind = _direct_kind(type(op))
        if (
            kind is None
            or self.print_generic_format
            or self.print_debuginfo
            or op.properties
            or not op.operands
            or op in self.diagnostic.op_messages
        ):
            return False
        operands = op.operands
        if kind == "view":
            if op.attributes:
                return False
            self._print_results(op)
            self.print_string("memref.view ")
            self.print_ssa_value(operands[0])
            self.print_string("[")
            self.print_ssa_value(operands[1])
            self.print_string("][")
            self.print_list(operands[2:], self.print_ssa_value)
            self.print_string("] : ")
            self.print_attribute(operands[0].type)
            self.print_string(" to ")
            self.print_attribute(op.results[0].type)
            return True
        self._print_results(op)
        self.print_string(op.name)
        self.print_string(" ")
        self.print_list(operands, self.print_ssa_value)
        self.print_op_attributes(op.attributes)
        self.print_string(" : ")
        self.print_list((value.type for value in operands), self.print_attribute)
        return True

    def _print_alloc(self, op: Operation) -> None:
        """`%a = memref.alloc(%d)[%s] alignment = 64 {attrs} : memref<...>` (MLIR's
        format: its alignment is an i64, printed without its type)."""
        self._print_results(op)
        self.print_string("memref.alloc(")
        self.print_list(op.dynamic_sizes, self.print_ssa_value)  # type: ignore[attr-defined]
        self.print_string(")")
        if op.symbol_operands:  # type: ignore[attr-defined]
            self.print_string("[")
            self.print_list(op.symbol_operands, self.print_ssa_value)  # type: ignore[attr-defined]
            self.print_string("]")
        alignment = _mlir_alignment(op)
        if alignment is not None:
            self.print_string(f" alignment = {alignment}")
        self.print_op_attributes(op.attributes, reserved_attr_names=("operandSegmentSizes",))
        self.print_string(" : ")
        self.print_attribute(op.results[0].type)
        if self.print_debuginfo:
            self.print_string(" ")
            self.print_attribute(op.location)


# The assembly formats `_printed_directly` reproduces: an op of one of these formats that
# defines no attributes nor properties (whose defaults attr-dict would leave out) prints as
# "view" (memref.view's) or "operands" (its operands, its attributes, its operands' types).
_DIRECT_FORMATS = {
    "$source `[` $byte_shift `]` `` `[` $sizes `]` attr-dict `:` type($source) `to` "
    "type($result)": "view",
    "$values attr-dict `:` type($values)": "operands",  # nn.yield
    "$input attr-dict `:` type($input)": "operands",  # relu, sigmoid, ...: one operand
}
_DIRECT_KINDS: dict[type[Operation], str | None] = {}


def _direct_kind(op_type: type[Operation]) -> str | None:
    if op_type in _DIRECT_KINDS:
        return _DIRECT_KINDS[op_type]
    kind = None
    if isinstance(op_type, type) and issubclass(op_type, IRDLOperation):
        op_def = op_type.get_irdl_definition()
        printed_by_format = getattr(op_type.print, "__name__", "") == "print_with_format"
        if printed_by_format and not op_def.attributes and not op_def.properties:
            kind = _DIRECT_FORMATS.get(op_type.assembly_format or "")
    _DIRECT_KINDS[op_type] = kind
    return kind


def _mlir_alignment(op: Operation) -> int | None:
    """The alignment of a `memref.alloc` where MLIR can spell it (an i64, the only type its
    attribute takes), or None."""
    alignment = getattr(op, "alignment", None)
    if isinstance(alignment, IntegerAttr) and alignment.type == i64:
        return alignment.value.data
    return None


def print_module(
    module: ModuleOp,
    stream: IO[str] | None = None,
    generic: bool = False,
    mlir_compatible: bool = False,
) -> None:
    """Prints `module` to `stream` (standard output by default): in the generic form, or
    (`mlir_compatible`) with the ops of nnlayout's own dialects generic and the others
    custom, as upstream MLIR reads them."""
    stream = sys.stdout if stream is None else stream
    printer = _TypeCachingPrinter(stream=stream, print_generic_format=generic)
    printer.mlir_syntax = mlir_compatible
    printer.print_op(module)
    stream.write("\n")
