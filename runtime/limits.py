"""Refusing inputs and buffers that cannot fit in this machine's memory, before running."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from xdsl.dialects import func, memref
from xdsl.ir import Operation, SSAValue

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


# Ops whose result is a view of an operand's memory: they allocate nothing.
_VIEWS = (
    memref.ViewOp,
    memref.SubviewOp,
    memref.ReinterpretCastOp,
    memref.CollapseShapeOp,
    memref.ExpandShapeOp,
    memref.CastOp,
)


def _own_bytes(value: SSAValue) -> int:
    return 0 if isinstance(value.owner, _VIEWS) else buffer_bytes(value.type)


def check_live_values_fit(
    function: func.FuncOp,
    release: Mapping[Operation, Sequence[SSAValue]],
    kept: Collection[SSAValue],
    constants: Collection[Operation],
) -> None:
    """Raises a DiagnosticError at the first op of `function` after which the values held
    at once would not fit in memory, as the interpreter holds them: the arguments, each
    result in `kept` (some op reads it) until the op `release` frees it after, constants for
    good (they are cached). Checked before running: a program of 40 live 256 MB values is
    refused at once, not after allocating most of them."""
    limit = memory_limit()
    live = sum(buffer_bytes(arg.type) for arg in function.args)
    count = len(function.args)
    for op in function.body.block.ops:
        made = [r for r in op.results if r in kept]
        live += sum(_own_bytes(r) for r in made)
        count += len(made)
        if live > limit:
            raise DiagnosticError(
                op,
                refusal(live, f"what is live at once after {op.name} ({count} values)"),
            )
        for value in release.get(op, ()):
            if value.owner not in constants:
                live -= _own_bytes(value)
                count -= 1
