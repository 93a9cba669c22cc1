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
from nnlayout.dialects.packing import PACKED_ATTR, Packed, defining_op, packed_of
from nnlayout.kernels.providers import registry
from nnlayout.lowering.program import load_time_constants
from nnlayout.transforms.memory_plan import ConstantBytes


def _check_readers(op: Operation, claim: Packed) -> None:
    """Refuses a claim (hand-edited, or stale) that some reader's kernel does not make: read
    by another kernel, or as an operand the kernel does not pack, or packed into another
    size. The plan would count bytes that no kernel packs."""
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
        kernel = registry().kernels.get(name)
        packs = kernel is not None and kernel.op is type(inner) and kernel.packed_constants
        sizes = kernel.packed_constants(inner) if packs else {}  # type: ignore[misc,union-attr]
        for index, operand in enumerate(inner.operands):
            if defining_op(operand) is not op:
                continue
            size = sizes.get(index)
            if size is None or size[0] != claim.bytes:
                made = "does not pack it" if size is None else f"packs it into {size[0]}"
                raise DiagnosticError(
                    op,
                    f"packed for {claim.kernel} in {claim.bytes} bytes ('{PACKED_ATTR}'), but "
                    f"{inner.name} reads it as operand {index}, and {name} {made}",
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
