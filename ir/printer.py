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
from typing import IO

from xdsl.dialects.builtin import (
    IntegerAttr,
    MemRefType,
    ModuleOp,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation
from xdsl.printer import Printer

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

    def print_attribute(self, attribute: Attribute) -> None:
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
        self.print_string(text)

    def print_op(self, op: Operation) -> None:
        """With `mlir_syntax`: an op of nnlayout's own dialects (and the ops in its regions)
        in the generic form, `memref.alloc` as MLIR spells it."""
        if self.print_generic_format or not self.mlir_syntax:
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
