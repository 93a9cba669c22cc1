"""Printing modules, with the printed form of each type computed once."""

from __future__ import annotations

from io import StringIO
from typing import IO

from xdsl.dialects.builtin import MemRefType, ModuleOp, TensorType
from xdsl.ir import Attribute
from xdsl.printer import Printer

from nnlayout.dialects.kernel_attr import KernelAttr

# Attributes printed once and then reused: the types and kernel choices every op repeats.
_REPEATED = (TensorType, MemRefType, KernelAttr)


class _TypeCachingPrinter(Printer):
    """xDSL's printer, writing the text of each distinct tensor or memref type and
    `#nn.kernel` once and then reusing it (printing them is much of the printing time of a
    large model)."""

    _tensor_texts: dict[Attribute, str] | None = None

    def print_attribute(self, attribute: Attribute) -> None:
        if not isinstance(attribute, _REPEATED):
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
