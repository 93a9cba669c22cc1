"""The bytes a function's constants take once loaded, for `plan-memory`'s figures.

Constants (and constant expressions, evaluated at load) are not in the arena: the loaded
program holds each once, in the layout its type carries, or packed in the format of the
kernel reading it (`dialects/packing.py`: oneDNN's int8 weights with their compensation).
`plan-memory` records these sums on the function (`nnlayout.constant_bytes`,
`nnlayout.packed_bytes`, `nnlayout.compensation_bytes`, `nnlayout.packed_plain_bytes`) and
its report prints them.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import Operation

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import buffer_bytes
from nnlayout.dialects.packing import PACKED_ATTR, Packed, packed_of
from nnlayout.lowering.program import load_time_constants
from nnlayout.transforms.memory_plan import ConstantBytes


def _check_readers(op: Operation, claim: Packed) -> None:
    """Refuses a claim (hand-edited, or stale) that some reader's kernel does not make:
    the plan would count bytes that no kernel packs."""
    for use in op.results[0].uses:
        reader = use.operation
        inner = reader.inner if isinstance(reader, ComputeOp) else reader
        chosen = kernel_of(inner)
        name = "no kernel" if chosen is None else chosen.kernel_name.data
        if name != claim.kernel:
            raise DiagnosticError(
                op,
                f"packed for {claim.kernel} ('{PACKED_ATTR}'), but {inner.name} of {name} reads it",
            )


def constant_bytes(function: func.FuncOp) -> ConstantBytes:
    """The sums of `ConstantBytes` over the constants (and constant expressions) of
    `function` that the loaded program keeps: those some per-run op reads."""
    total = packed = packed_bytes = plain = compensation = 0
    for op in load_time_constants(function)[1]:
        if len(op.results) != 1:
            continue
        size = buffer_bytes(op.results[0].type)
        claim = packed_of(op)
        if claim is None:
            total += size
            continue
        _check_readers(op, claim)
        total += claim.bytes
        packed += 1
        packed_bytes += claim.bytes
        plain += size
        compensation += claim.compensation
    return ConstantBytes(total, packed, packed_bytes, plain, compensation)
