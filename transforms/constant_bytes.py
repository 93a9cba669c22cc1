"""The bytes a function's constants take once loaded, for `plan-memory`'s figures.

Constants (and constant expressions, evaluated at load) are not in the arena: the loaded
program holds each in the layout its type carries. A kernel may keep a constant it reads in a
format of its own: packed (`dialects/packing.py`: oneDNN's int8 weights with their
compensation), or copied (`Kernel.copied_constants`: the BLAS kernel's K x N copy of a
transposed Gemm's weights, which no IR records). Once loaded, a generated module keeps the
plain array only where something still reads it (`lowering/program.py`,
`released_constants`): an op run on every run (one reading a function argument: the plain
array is passed on each call), or a kernel bound once that reads it as given. Where every
reader is a kernel bound once that packs or copies it, the plain array is freed and the
kernels' copies alone are held.

`nnlayout.constant_bytes` counts what is held: the plain arrays still read, the packed
copies and the kernels' copies. Of it, `nnlayout.packed_bytes` are the packed copies
(`nnlayout.compensation_bytes` of compensation among them) and `nnlayout.packed_plain_bytes`
the plain arrays of packed constants still held (read on every run);
`nnlayout.released_bytes` (not in the total) are the plain arrays freed at load. `plan-memory`
records these sums on the function and its report prints them. (A kernel's copy made at load
that no rule predicts, an f32 convolution's weights repacked for the format oneDNN picks on
the machine that loads it, is counted as the plain array it replaces.)
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import buffer_bytes
from nnlayout.dialects.packing import PACKED_ATTR, Packed, defining_op, packed_of
from nnlayout.kernels.providers import registry
from nnlayout.lowering.program import bound_once, load_time_constants, per_run_values
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


def _kept_by_kernel(reader: Operation, op: Operation, claimed: bool) -> tuple[int, bool]:
    """The bytes of the copies of `op`'s value the kernel of `reader` keeps
    (`Kernel.copied_constants`), and whether, bound once, it reads the plain array itself:
    not where `op` is packed for it (`claimed`: `_check_readers` holds every reader packs
    it) or it copies every operand `op` feeds."""
    inner = reader.inner if isinstance(reader, ComputeOp) else reader
    chosen = kernel_of(inner)
    kernel = registry().kernels.get(chosen.kernel_name.data) if chosen else None
    if kernel is None or kernel.op is not type(inner):
        return 0, True
    copies = kernel.copied_constants(inner) if kernel.copied_constants else {}
    indices = [i for i, v in enumerate(inner.operands) if defining_op(v) is op]
    copied = sum(copies.get(i, 0) for i in indices)
    return copied, not claimed and any(not copies.get(i) for i in indices)


def _held(op: Operation, per_run: set[SSAValue], claimed: bool) -> tuple[int, bool]:
    """The bytes of the copies of `op`'s value its readers' kernels keep, and whether the
    loaded program keeps the plain array (module doc)."""
    copied, plain = 0, False
    for use in op.results[0].uses:
        reader = use.operation
        if not bound_once(reader, per_run):
            plain = True
        kernel_copies, reads_plain = _kept_by_kernel(reader, op, claimed)
        copied += kernel_copies
        plain = plain or reads_plain
    return copied, plain


def constant_bytes(function: func.FuncOp) -> ConstantBytes:
    """The sums of `ConstantBytes` over the constants (and constant expressions) of
    `function` that the loaded program keeps: those some per-run op reads."""
    total = packed = packed_bytes = plain = compensation = released = 0
    per_run = per_run_values(function)
    for op in load_time_constants(function)[1]:
        if len(op.results) != 1:
            continue
        size = buffer_bytes(op.results[0].type)
        claim = packed_of(op)
        if claim is not None:
            _check_readers(op, claim)
        copied, kept = _held(op, per_run, claim is not None)
        total += copied + (size if kept else 0)
        released += 0 if kept else size
        if claim is None:
            continue
        total += claim.bytes  # the kernel's packed copy
        packed += 1
        packed_bytes += claim.bytes
        plain += size if kept else 0
        compensation += claim.compensation
    return ConstantBytes(total, packed, packed_bytes, plain, compensation, released)
