"""What a generated module runs: its planned IR parsed, checked and bound once at import
(`Program.load`), constants evaluated once, each `nn.compute` bound to its kernel (see
`lowering/to_numpy.py`, which writes the module).

Once loaded, the module and its `Program` drop their own references to the constants that
only `nn.compute` ops bound once read (`released_constants`, `Program.release_constants`):
each such kernel keeps what it reads itself. A kernel that packs a constant into a format of
its own (oneDNN's int8 weights, an f32 convolution's weights repacked at load, the BLAS
kernel's K x N copy) keeps the packed copy alone, so the plain array is freed; a kernel that
may still read the plain one (a reference fallback, a call whose arrays did not suit the
primitive) keeps it alive. Constants some op reads on every run (an `nn.compute` reading a
function argument, a copy, a return) stay the module's."""

from __future__ import annotations

import ctypes
import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Operation, SSAValue

from nnlayout.diagnostics import DiagnosticError, UserError, error_at
from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.constant_expressions import is_constant_expression
from nnlayout.dialects.nn import ConstantOp
from nnlayout.dialects.weights import (
    WeightsError,
    load_weights,
)
from nnlayout.ir.module import read_module
from nnlayout.kernels.registry import BindingSession
from nnlayout.kernels.values import element_dtype
from nnlayout.runtime.binding import bind_compute, evaluate_constants, on_buffers
from nnlayout.runtime.interpreter import (
    ArgumentSpec,
    argument_specs,
    check_arguments,
    find_entry,
)
from nnlayout.runtime.limits import check_buffers_fit
from nnlayout.runtime.plan_check import check_before_running
from nnlayout.runtime.values import (
    BoundCompute,
)

if TYPE_CHECKING:
    from nnlayout.kernels.registry import FixedCall
    from nnlayout.kernels.values import RuntimeValue


def load_time_constants(function: func.FuncOp) -> tuple[frozenset[Operation], list[Operation]]:
    """The constant expressions of `function` (evaluated at load, never per run), and those
    of them some per-run op reads, in program order: `Program.constants[i]` is the value of
    the i-th of these."""
    known: dict[Operation, bool] = {}
    ops = list(function.body.block.ops)
    constants = frozenset(op for op in ops if is_constant_expression(op, known))
    read = [
        op
        for op in ops
        if op in constants
        and any(use.operation not in constants for result in op.results for use in result.uses)
    ]
    return constants, read


def per_run_values(function: func.FuncOp) -> set[SSAValue]:
    """The values a generated module makes on every run rather than once at load: the
    function's arguments and the views of them (subviews, reinterpret casts)."""
    values: set[SSAValue] = set(function.args)
    for op in function.body.block.ops:
        if isinstance(op, memref.SubviewOp | memref.ReinterpretCastOp) and op.source in values:
            values.add(op.result)
    return values


def bound_once(op: Operation, per_run: set[SSAValue]) -> bool:
    """Whether a generated module binds `op` to its arrays once at load (`Program.on`): an
    `nn.compute` none of whose operands is made on every run (`per_run_values`)."""
    return isinstance(op, ComputeOp) and per_run.isdisjoint(op.operands)


def released_constants(function: func.FuncOp) -> list[bool]:
    """For each constant `load_time_constants(function)[1]` lists, whether only `nn.compute`
    ops bound once read it (`bound_once`): a generated module drops its own reference to it
    once loaded, and its readers' kernels keep what they read."""
    per_run = per_run_values(function)
    return [
        all(bound_once(use.operation, per_run) for result in op.results for use in result.uses)
        for op in load_time_constants(function)[1]
    ]


class Program:
    """What a generated module runs: the entry function of the planned IR, its constant
    expressions evaluated (and packed into their layouts) once, and its `nn.compute` ops bound
    to their kernels once (`constants[i]`, `kernels[i]`: the i-th of each, in program order;
    see `load_time_constants`)."""

    def __init__(self, module: ModuleOp, entry: str | None, source_path: str | None):
        self.function = find_entry(module, entry)
        self._specs: list[ArgumentSpec] | None = None
        check_buffers_fit(self.function)
        check_before_running(self.function)
        ops = list(self.function.body.block.ops)
        constants, read = load_time_constants(self.function)
        try:
            weights = (
                load_weights(module, source_path)
                if any(isinstance(op, ConstantOp) and op.external is not None for op in constants)
                else {}
            )
        except WeightsError as error:
            raise UserError(str(error)) from None
        self.source_path = source_path
        self.constants = _FromIR(self, "constant", evaluate_constants(read, lambda: weights))
        session = BindingSession()
        self.computes = [op for op in ops if isinstance(op, ComputeOp)]
        kernels: list[BoundCompute] = [bind_compute(op, session=session) for op in self.computes]
        self.kernels = _FromIR(self, "nn.compute", kernels)
        self.bound: dict[int, FixedCall] = {}  # index -> its `on` call (for the profiler)
        self.running = threading.Lock()  # held by the generated module's run()

    @classmethod
    def load(
        cls, module_file: str, ir_name: str, entry: str, ir_sha256: str | None = None
    ) -> Program:
        """Parses and verifies the planned IR `ir_name` beside `module_file` (refused unless
        its text has the SHA-256 `ir_sha256`, when given), and binds its function `entry`;
        errors are UserErrors located in that IR."""
        path = str(Path(module_file).parent / ir_name)
        _, module, text = read_module(path)
        actual = hashlib.sha256(text.encode()).hexdigest()
        if ir_sha256 is not None and actual != ir_sha256:
            raise UserError(
                f"'{module_file}' and its planned IR '{path}' are not a pair: the IR's "
                f"SHA-256 is {actual[:16]}..., the module records {ir_sha256[:16]}... (files "
                "of two different writes, or one truncated or edited); translate again"
            )
        try:
            return cls(module, entry, path)
        except DiagnosticError as error:
            raise error_at(error.op, error.message, text) from None

    def on(self, index: int, ins: Sequence[RuntimeValue], outs: Sequence[np.ndarray]) -> FixedCall:
        """Kernel `index` bound to the arrays `ins` and `outs`, which every run passes again
        (`on_buffers`). Arrays that are not the buffers of the IR's nn.compute `index` mean
        the generated module was written for other planned IR: refused."""
        kernel = self.kernels[index]
        op = self.computes[index]
        if len(ins) != len(op.ins) or len(outs) != len(op.outs):
            raise UserError(self.not_its_ir(f"nn.compute {index} takes other operands"))
        for array, value in zip((*ins, *outs), op.operands, strict=True):
            value_type = value.type
            if isinstance(value_type, MemRefType) and (
                not isinstance(array, np.ndarray)
                or array.shape != tuple(value_type.get_shape())
                or array.dtype != element_dtype(value_type.element_type)
            ):
                raise UserError(
                    self.not_its_ir(f"nn.compute {index} has an operand of type {value_type}")
                )
        self.bound[index] = call = on_buffers(kernel, ins, outs)
        return call

    def release_constants(self) -> None:
        """Drops the references to the constants that this Program holds, which the generated
        module calls once loaded (see the module doc): it holds those its runs read, and the
        kernels it bound those they read."""
        self.constants.release()
        _return_freed_memory()

    def not_its_ir(self, detail: str) -> str:
        """Why a generated module cannot run its planned IR: it was written for another."""
        return (
            f"'{self.source_path}' is not the planned IR this generated module was written "
            f"for ({detail}): it is another target's, build's or version's; translate again"
        )

    def arguments(self, inputs: Sequence[np.ndarray]) -> Sequence[np.ndarray]:
        """`inputs`, once checked against the entry's arguments (count, shapes, dtypes)."""
        if self._specs is None:  # the signature's, worked out once: not per run
            self._specs = argument_specs(self.function)
        check_arguments(self.function, inputs, self._specs)
        return inputs


def _return_freed_memory() -> None:
    """Asks the C library to give the pages of freed memory back to the system (glibc's
    `malloc_trim`; elsewhere nothing): the plain arrays freed at load lie below arrays
    allocated after them (the packed copies), where the allocator would keep their pages,
    and the process's resident memory would not shrink."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError, TypeError):  # no glibc; TypeError: Windows' CDLL(None)
        return
    trim(0)


class _FromIR(list):  # type: ignore[type-arg]
    """What a `Program` made from its planned IR, indexed by the generated module: an index
    past its end means the module was generated from other planned IR (a one-line error,
    not an IndexError)."""

    def __init__(self, program: Program, what: str, items: Sequence[object]):
        super().__init__(items)
        self.program, self.what = program, what
        self.released = False

    def release(self) -> None:
        """Drops the items (their count stays): asking for one after is an error."""
        self[:] = [None] * len(self)
        self.released = True

    def __getitem__(self, index: int) -> object:  # type: ignore[override]
        if isinstance(index, int) and not 0 <= index < len(self):
            raise UserError(
                self.program.not_its_ir(
                    f"the module asks for {self.what} {index}, the IR has {len(self)}"
                )
            )
        if self.released:
            raise UserError(
                f"{self.what} {index} of '{self.program.source_path}' was released once the "
                "generated module was loaded: only the module loads them"
            )
        return super().__getitem__(index)
