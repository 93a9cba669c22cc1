"""The bytes a function's constants take once loaded, for `plan-memory`'s figures.

Constants (and constant expressions, evaluated at load) are not in the arena: the loaded
program holds each in the layout its type carries. A constant that the kernel reading it
keeps packed in a format of its own (`dialects/packing.py`: oneDNN's int8 weights with their
compensation) is held twice: plain, by the loaded program (the array the kernel is called
with, and packs from), and packed, by the kernel. `nnlayout.constant_bytes` counts both;
of it, `nnlayout.packed_bytes` are the packed copies (`nnlayout.compensation_bytes` of
compensation among them), `nnlayout.packed_plain_bytes` the plain arrays they come from.
`plan-memory` records these sums on the function and its report prints them.

A kernel may also keep a copy of a constant of its own that no IR records (the BLAS kernel's
K x N copy of a transposed Gemm's weights, `Kernel.copied_constants`): `constant_bytes`
counts it too.
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


def _copies(op: Operation) -> int:
    """The bytes of the copies of `op`'s value that its readers' kernels keep."""
    total = 0
    for use in op.results[0].uses:
        reader = use.operation
        inner = reader.inner if isinstance(reader, ComputeOp) else reader
        chosen = kernel_of(inner)
        kernel = registry().kernels.get(chosen.kernel_name.data) if chosen else None
        if kernel is None or kernel.op is not type(inner) or kernel.copied_constants is None:
            continue
        copies = kernel.copied_constants(inner)
        total += sum(copies.get(i, 0) for i, v in enumerate(inner.operands) if defining_op(v) is op)
    return total


def constant_bytes(function: func.FuncOp) -> ConstantBytes:
    """The sums of `ConstantBytes` over the constants (and constant expressions) of
    `function` that the loaded program keeps: those some per-run op reads."""
    total = packed = packed_bytes = plain = compensation = 0
    for op in load_time_constants(function)[1]:
        if len(op.results) != 1:
            continue
        size = buffer_bytes(op.results[0].type)
        total += _copies(op)
        claim = packed_of(op)
        if claim is None:
            total += size
            continue
        _check_readers(op, claim)
        total += size + claim.bytes  # the plain array and the kernel's packed copy
        packed += 1
        packed_bytes += claim.bytes
        plain += size
        compensation += claim.compensation
    return ConstantBytes(total, packed, packed_bytes, plain, compensation)
