"""Refusing work that cannot fit in this machine's memory, before allocating any of it.

A tensor type such as `tensor<1000000x1000000xf32>` verifies (its size fits in 64 bits), but
running it needs 4 TB. numpy would raise MemoryError at best, and at worst the operating system
would overcommit and kill the process half-way. The interpreter and `nnlayout-run` ask here
first and report the size with the value that needs it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from xdsl.dialects import func

from nnlayout.dialects.layout import buffer_bytes
from nnlayout.tools.driver import DiagnosticError, UserError

if TYPE_CHECKING:
    from nnlayout.lowering.interpreter import ArgumentSpec


def memory_limit() -> int:
    """The bytes of physical memory of this machine: no buffer may need more."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def human_bytes(count: int) -> str:
    """`count` bytes in binary units, e.g. '3.6 TiB'."""
    size, unit = float(count), "B"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"):
        if size < 1024 or unit == "YiB":
            break
        size /= 1024
    return f"{size:.1f} {unit}" if unit != "B" else f"{count} B"


def too_large(nbytes: int, what: str) -> str | None:
    """Why `what` cannot be allocated, or None when `nbytes` fit in memory."""
    return refusal(nbytes, what) if nbytes > memory_limit() else None


def refusal(nbytes: int, what: str) -> str:
    """Why `what`, of `nbytes` bytes (more than this machine has), is not allocated."""
    return (
        f"{what} needs {nbytes:,} bytes ({human_bytes(nbytes)}), more than this machine's "
        f"memory ({human_bytes(memory_limit())}); refusing to allocate it"
    )


def check_inputs_fit(specs: Sequence[ArgumentSpec]) -> None:
    """Raises a UserError unless each input of the entry function, and all of them together,
    fit in memory."""
    sizes = [math.prod(spec.shape) * spec.dtype.itemsize for spec in specs]
    for spec, nbytes in zip(specs, sizes, strict=True):
        if (reason := too_large(nbytes, f"{spec.label}: {spec.describe()}")) is not None:
            raise UserError(reason)
    if (reason := too_large(sum(sizes), "the inputs together")) is not None:
        raise UserError(reason)


def check_buffers_fit(function: func.FuncOp) -> None:
    """Raises a DiagnosticError at the first op (or the function, for an argument) of
    `function` whose value alone would not fit in memory."""
    limit = memory_limit()
    for arg in function.args:
        if (nbytes := buffer_bytes(arg.type)) > limit:
            name = f"argument %{arg.name_hint}" if arg.name_hint else f"argument {arg.index + 1}"
            raise DiagnosticError(function, refusal(nbytes, f"{name} ({arg.type})"))
    for op in function.walk():
        for result in op.results:
            # The message prints the type, so it is built only for a value that is refused.
            if (nbytes := buffer_bytes(result.type)) > limit:
                raise DiagnosticError(
                    op, refusal(nbytes, f"the result of {op.name} ({result.type})")
                )
