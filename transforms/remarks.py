"""Remarks: why a pass decided what it did — a kernel fallback, a layout not propagated, a
reorder kept — printed as `file:line:col: remark: ...` like MLIR's optimization remarks.

A pass emits remarks unconditionally; they are printed when the pass's `remarks=true` option or
`nnlayout-opt --remarks` asks for them, and collected by `--verify-diagnostics` to check
`// expected-remark {{...}}` annotations.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from xdsl.ir import Operation

from nnlayout.diagnostics import location_of


@dataclass(frozen=True)
class Remark:
    op: Operation
    pass_name: str
    message: str

    @property
    def line(self) -> int | None:
        location = location_of(self.op)
        return location.line if location else None

    def render(self) -> str:
        location = location_of(self.op)
        where = f"{location}: " if location else ""
        return f"{where}remark: [{self.pass_name}] {self.op.name}: {self.message}"


_collected: list[Remark] | None = None
_print_all = False


def set_printing(enabled: bool) -> None:
    """Print every remark of every pass (nnlayout-opt --remarks)."""
    global _print_all
    _print_all = enabled


@contextmanager
def collecting() -> Iterator[list[Remark]]:
    """Collects the remarks emitted inside the `with` block."""
    global _collected
    previous, _collected = _collected, []
    try:
        yield _collected
    finally:
        _collected = previous


def emit(op: Operation, pass_name: str, message: str, print_it: bool = False) -> None:
    remark = Remark(op, pass_name, message)
    if _collected is not None:
        _collected.append(remark)
    if print_it or _print_all:
        print(remark.render(), file=sys.stderr)
