"""Refusing inputs and buffers that cannot fit in this machine's memory, before running."""

from __future__ import annotations

from xdsl.dialects import func

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects.layout import buffer_bytes
from nnlayout.limits import memory_limit, refusal


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
