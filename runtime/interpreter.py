"""The reference interpreter: runs a `func.func` of `nn` and `layout` ops on numpy arrays.

It walks the function's block op by op, calling one kernel per op (chosen and bound by
`runtime/binding.py`, which generated code shares), and drops every intermediate right after
its last use, so that a network's peak memory is its widest cut rather than the sum of all its
activations (xDSL's interpreter keeps every value of a region alive until it returns).

Run-time representation: a value whose tensor type carries `#layout.layout<...>` is its
*physical* array (`LayoutSpec.pack`, zero padding); a `#layout.storage<"csr">` value is a
`scipy.sparse.csr_array`; any other value is its logical array. `layout.reorder` converts
between them. The reference kernels compute on logical arrays only, so an nn op's operands are
unpacked before its kernel runs and its result is packed to its declared layout after, which
gives every layout annotation its meaning. The entry function takes and returns logical arrays.

Constants and constant expressions (`dialects/constant_expressions.py`) are evaluated once,
the first time a run needs them, with the reference kernels, and shared read-only by every
later run, as the generated module evaluates them once when it is loaded.

Supported: `nn.*`, `layout.reorder`, `func.call` and `func.return`, in single-block functions
of a verified module. Numeric edge cases follow IEEE (exp overflows to inf, sqrt(-1) is nan)
without numpy warnings.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, TensorType
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.traits import SymbolTable

from nnlayout.diagnostics import DiagnosticError, UserError
from nnlayout.dialects import nn
from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.constant_expressions import is_constant_expression
from nnlayout.dialects.layout import FillBorderOp, ReorderOp
from nnlayout.dialects.weights import load_weights
from nnlayout.kernels.reference import REFERENCE_KERNELS, Kernel
from nnlayout.kernels.registry import BindingSession
from nnlayout.kernels.values import (
    apply_kernel,
    element_dtype,
    to_logical,
    to_physical,
    value_dtype,
)
from nnlayout.limits import too_large
from nnlayout.runtime.binding import bind_compute, evaluate_constants, kernel_for
from nnlayout.runtime.limits import check_buffers_fit, check_live_values_fit
from nnlayout.runtime.plan_check import check_before_running
from nnlayout.runtime.values import (
    BoundCompute,
    aligned_empty,
    fill_border,
    reinterpret,
    subview_slices,
)

if TYPE_CHECKING:
    from nnlayout.kernels.values import RuntimeValue


# ------------------------------------------------------ entry and its arguments
def find_entry(module: ModuleOp, name: str | None = None) -> func.FuncOp:
    """The function `name`, or the module's only public function when `name` is None."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if name is not None:
        found = next((f for f in functions if f.sym_name.data == name), None)
        if found is None:
            listed = ", ".join(f"@{f.sym_name.data}" for f in functions) or "none"
            raise UserError(f"no function @{name} in the module (functions: {listed})")
        if found.is_declaration:
            raise UserError(f"function @{name} is a declaration without a body")
        return found
    public = [
        f
        for f in functions
        if not f.is_declaration and (f.sym_visibility is None or f.sym_visibility.data == "public")
    ]
    if not public:
        raise UserError("the module has no public function with a body to run")
    if len(public) > 1:
        listed = ", ".join(f"@{f.sym_name.data}" for f in public)
        raise UserError(
            f"the module has {len(public)} public functions ({listed}); "
            "name the one to run (--entry NAME)"
        )
    return public[0]


@dataclass(frozen=True)
class ArgumentSpec:
    """What the entry function expects for one argument, in user terms (logical array)."""

    label: str  # "argument 1 (%x)", for messages
    shape: tuple[int, ...]
    dtype: np.dtype

    def describe(self) -> str:
        return f"{list(self.shape)} {self.dtype.name}"

    def check(self, array: object) -> None:
        """Raises a UserError naming the argument unless `array` matches."""
        if not isinstance(array, np.ndarray):
            raise UserError(
                f"{self.label}: expected a numpy array of shape {self.describe()}, "
                f"got {type(array).__name__}"
            )
        self.check_header(array.shape, array.dtype)

    def check_header(self, shape: tuple[int, ...], dtype: np.dtype) -> None:
        """Raises a UserError naming the argument unless arrays of `shape` and `dtype` match
        (a .npy header is checked before its data is read)."""
        if shape != self.shape or dtype != self.dtype:
            got = dtype.name if dtype.isnative else dtype.str  # '>f4' is not float32 here
            hint = ""
            if self.dtype.name == "bfloat16" and dtype != self.dtype:  # numpy has no bfloat16
                hint = " (an array of ml_dtypes.bfloat16, as numpy.save writes it)"
            raise UserError(
                f"{self.label}: expected shape {self.describe()}{hint}, got {list(shape)} {got}"
            )


def argument_specs(function: func.FuncOp) -> list[ArgumentSpec]:
    """The logical shape and dtype of each argument of `function`, numbered from 1."""
    specs = []
    for index, (arg, arg_type) in enumerate(
        zip(function.args, function.function_type.inputs, strict=True)
    ):
        label = f"argument {index + 1}" + (f" (%{arg.name_hint})" if arg.name_hint else "")
        if not isinstance(arg_type, TensorType | MemRefType) or any(
            d < 0 for d in arg_type.get_shape()
        ):
            raise UserError(
                f"{label}: has type {arg_type}; only statically shaped tensors "
                "and memrefs can be passed in"
            )
        dtype = value_dtype(arg_type.element_type)
        if dtype is None:
            raise UserError(f"{label}: element type {arg_type.element_type} is not supported")
        if 0 in arg_type.get_shape():
            raise UserError(
                f"{label}: has type {arg_type}, with a zero-size dimension; empty "
                "tensors are not supported"
            )
        specs.append(ArgumentSpec(label, tuple(arg_type.get_shape()), dtype))
    return specs


def index_bounds(function: func.FuncOp) -> list[int | None]:
    """For each argument of `function` that some nn.gather or nn.scatter reads as its
    indices (directly, through moves of them, or as an nn.compute's operand or a copy an
    nn.compute made in planned IR), the smallest size they index; None for the others.
    (Asked where inputs are made up, `nnlayout-run --random-inputs`: not by every run's
    argument checks.)"""
    bounds: dict[SSAValue, int] = {}
    for op in function.walk():
        if isinstance(op, nn.GatherOp | nn.ScatterOp):
            root = _indices_root(op.indices)
            size = nn.shape_of(op.data)[op.axis.value.data]
            bounds[root] = min(size, bounds.get(root, size))
    return [bounds.get(arg) for arg in function.args]


def _indices_root(value: SSAValue) -> SSAValue:
    """The value `value`'s indices come from: followed back through an nn.compute's block
    arguments, ops that move indices (reshapes and their views) and, in planned IR, the
    nn.compute that wrote a buffer of them (a transposed copy)."""
    element = getattr(value.type, "element_type", None)
    while True:
        if isinstance(value, BlockArgument):
            parent = value.owner.parent_op()
            if not isinstance(parent, ComputeOp):
                return value
            value = parent.operands[value.index]
            continue
        writer = next(
            (
                u.operation
                for u in value.uses
                if isinstance(u.operation, ComputeOp) and u.index >= len(u.operation.ins)
            ),
            None,
        )
        sources = writer.ins if writer is not None else value.owner.operands
        source = next(
            (v for v in sources if getattr(v.type, "element_type", None) == element), None
        )
        if source is None:
            return value
        value = source


def check_input_count(function: func.FuncOp, count: int) -> list[ArgumentSpec]:
    """The argument specs of `function`; raises a UserError listing them unless it takes
    `count` inputs."""
    specs = argument_specs(function)
    if count != len(specs):
        expected = ", ".join(f"{s.label}: {s.describe()}" for s in specs) or "nothing"
        raise UserError(
            f"@{function.sym_name.data} takes {len(specs)} input(s) ({expected}), got {count}"
        )
    return specs


def check_arguments(
    function: func.FuncOp, inputs: Sequence[object], specs: Sequence[ArgumentSpec] | None = None
) -> None:
    """Checks the count, shapes and dtypes of `inputs` against `function`'s signature, or
    against `specs`, its argument specs as a caller that runs it many times keeps them."""
    if specs is None or len(specs) != len(inputs):
        specs = check_input_count(function, len(inputs))
    for spec, array in zip(specs, inputs, strict=True):
        spec.check(array)


def check_inputs_fit(specs: Sequence[ArgumentSpec]) -> None:
    """Raises a UserError unless each input of the entry function, and all of them together,
    fit in memory."""
    sizes = [math.prod(spec.shape) * spec.dtype.itemsize for spec in specs]
    for spec, nbytes in zip(specs, sizes, strict=True):
        if (reason := too_large(nbytes, f"{spec.label}: {spec.describe()}")) is not None:
            raise UserError(reason)
    if (reason := too_large(sum(sizes), "the inputs together")) is not None:
        raise UserError(reason)


# ------------------------------------------------------------------ interpreter
@dataclass(frozen=True)
class _Plan:
    """Per function: its constant expressions (evaluated once, not on each run), the values
    some other op reads (the others are dropped as soon as they are made) and, for each op,
    the values whose last use it is."""

    constants: frozenset[Operation]
    used: frozenset[SSAValue]
    release: Mapping[Operation, tuple[SSAValue, ...]]


class Interpreter:
    """Runs functions of one module; weights and materialised constants are shared by runs.

    `peak_live_values` is the largest number of SSA values held at once during the runs so
    far: with intermediates freed after their last use, it is the widest cut of the graph.
    """

    def __init__(
        self,
        module: ModuleOp,
        *,
        source_path: str | None = None,
        kernels: Mapping[type[Operation], Kernel] = REFERENCE_KERNELS,
        use_chosen_kernels: bool = True,
    ):
        self.module = module
        self.use_chosen_kernels = use_chosen_kernels
        self.source_path = source_path
        self.kernels = kernels
        self.peak_live_values = 0
        self._weights: Mapping[str, np.ndarray] | None = None
        self._constants: dict[Operation, RuntimeValue] = {}
        self._plans: dict[func.FuncOp, _Plan] = {}
        self._bound: dict[ComputeOp, BoundCompute] = {}
        self._session = BindingSession()  # see bind_compute
        # The functions being run and their live values, innermost last.
        self._frames: list[tuple[func.FuncOp, dict[SSAValue, RuntimeValue]]] = []
        # One run at a time: kernels stay bound to buffers between runs (see `run`).
        self._running = threading.Lock()

    def run(self, inputs: Sequence[np.ndarray], entry: str | None = None) -> tuple[np.ndarray, ...]:
        """Runs the entry function on logical input arrays; returns its logical results.
        Runs called from several threads take turns."""
        function = find_entry(self.module, entry)
        check_arguments(function, inputs)
        signature = function.function_type
        with self._running, np.errstate(all="ignore"):
            args = [to_physical(a, t) for a, t in zip(inputs, signature.inputs, strict=True)]
            results = self._call(function, args)
            # A returned buffer may be reused by the next run: the caller gets a copy.
            return tuple(
                np.array(v) if isinstance(t, MemRefType) else to_logical(v, t)
                for v, t in zip(results, signature.outputs, strict=True)
            )

    def kernel_for(self, op: Operation) -> tuple[Kernel, bool]:
        """The kernel that computes `op`, and whether it works on physical values.

        That is the kernel `select-dispatch` chose (from the registry, as generated code
        would call it) once the op's operand and result types are in the layouts that kernel
        declared, i.e. after `insert-layouts`; before that, or without a choice, it is the
        reference kernel on logical arrays, which computes the same function."""
        found = kernel_for(op, self.kernels, self.use_chosen_kernels)
        if found is None:
            raise DiagnosticError(op, f"the interpreter cannot run '{op.name}' (no kernel)")
        return found[1], found[2]

    # ------------------------------------------------------------- execution
    def _call(self, function: func.FuncOp, args: Sequence[RuntimeValue]) -> list[RuntimeValue]:
        if any(function is active for active, _ in self._frames):
            raise DiagnosticError(
                function, f"@{function.sym_name.data} calls itself; recursion cannot be interpreted"
            )
        if len(function.body.blocks) != 1:
            raise DiagnosticError(function, "only single-block functions can be interpreted")
        plan = self._plan(function)
        # Only values some op reads are kept; each is dropped right after its last reader.
        env = {
            arg: value for arg, value in zip(function.args, args, strict=True) if arg in plan.used
        }
        self._frames.append((function, env))
        try:
            for op in function.body.block.ops:
                if isinstance(op, func.ReturnOp):
                    return [env[v] for v in op.arguments]
                if op in plan.constants:
                    if op.results[0] in plan.used:  # else only other constants read it
                        env[op.results[0]] = self._constant(op)
                else:
                    results = self._execute(op, [env[v] for v in op.operands])
                    env.update(
                        (r, v) for r, v in zip(op.results, results, strict=True) if r in plan.used
                    )
                self.peak_live_values = max(
                    self.peak_live_values, sum(len(frame) for _, frame in self._frames)
                )
                for value in plan.release.get(op, ()):
                    del env[value]
            raise DiagnosticError(function, "function body does not end with func.return")
        finally:
            self._frames.pop()

    def _plan(self, function: func.FuncOp) -> _Plan:
        plan = self._plans.get(function)
        if plan is None:
            check_buffers_fit(function)  # before the first allocation
            check_before_running(function)
            known: dict[Operation, bool] = {}
            constants = frozenset(
                op for op in function.body.block.ops if is_constant_expression(op, known)
            )
            last_use: dict[SSAValue, Operation] = {}
            for op in function.body.block.ops:
                if op in constants:
                    continue  # its operands are read once, when it is evaluated
                for operand in op.operands:
                    last_use[operand] = op
            release: dict[Operation, list[SSAValue]] = {}
            for value, op in last_use.items():
                release.setdefault(op, []).append(value)
            plan = _Plan(
                constants,
                frozenset(last_use),
                {op: tuple(values) for op, values in release.items()},
            )
            check_live_values_fit(function, plan.release, plan.used, constants)
            self._plans[function] = plan
        return plan

    def _execute(self, op: Operation, operands: list[RuntimeValue]) -> Sequence[RuntimeValue]:
        if isinstance(op, ReorderOp):
            logical = to_logical(operands[0], op.input.type)
            return (to_physical(logical, op.output.type),)
        if isinstance(op, ComputeOp):
            self._compute(op, operands)
            return ()
        if isinstance(op, memref.AllocOp):
            return (_allocate(op.memref.type),)
        if isinstance(op, memref.SubviewOp):
            return (_subview(operands[0], op),)
        if isinstance(op, memref.ReinterpretCastOp):  # a reshape made a view
            return (reinterpret(operands[0], op),)
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            return (op.value.value.data,)
        if isinstance(op, memref.ViewOp):  # a planned buffer: bytes of the arena
            return (_view(operands[0], operands[1], op),)
        if isinstance(op, memref.CopyOp):
            operands[1][...] = operands[0]
            return ()
        if isinstance(op, FillBorderOp):
            fill_border(
                operands[0],
                tuple(op.axes.get_values()),
                tuple(op.halo.get_values()),
                op.value.value.data,
            )
            return ()
        if isinstance(op, func.CallOp):
            callee = SymbolTable.lookup_symbol(self.module, op.callee)
            if not isinstance(callee, func.FuncOp) or callee.is_declaration:
                raise DiagnosticError(op, f"cannot call {op.callee}: no function body")
            return self._call(callee, operands)
        return (self._apply(op, operands),)

    def _apply(self, op: Operation, operands: list[RuntimeValue]) -> RuntimeValue:
        """Runs op's kernel and returns its result in the result type's layout."""
        kernel, on_physical = self.kernel_for(op)
        return apply_kernel(op, kernel, on_physical, operands)

    def _compute(self, op: ComputeOp, operands: list[RuntimeValue]) -> None:
        """Runs the body's op on the `ins` buffers and writes its result into `outs`, through
        the op bound to its kernel once (as generated code runs it)."""
        bound = self._bound.get(op)
        if bound is None:
            bound = self._bound[op] = bind_compute(
                op, self.kernels, self.use_chosen_kernels, self._session
            )
        bound(operands[: len(op.ins)], operands[len(op.ins) :])

    def _constant(self, op: Operation) -> RuntimeValue:
        """The run-time value of a constant expression, made once: read-only, since it is
        shared."""
        value = self._constants.get(op)
        if value is None:
            value = self._constants[op] = evaluate_constants([op], self._load_weights)[0]
        return value

    def _load_weights(self) -> Mapping[str, np.ndarray]:
        if self._weights is None:
            self._weights = load_weights(self.module, self.source_path)
        return self._weights


# ------------------------------------------------------------------ buffers
def _allocate(memref_type: Attribute) -> np.ndarray:
    """A fresh buffer for a contiguous memref, 64-byte aligned like `memref.alloc`."""
    assert isinstance(memref_type, MemRefType)
    dtype = element_dtype(memref_type.element_type)
    shape = tuple(memref_type.get_shape())
    return aligned_empty(math.prod(shape) * dtype.itemsize).view(dtype).reshape(shape)


def _view(arena: np.ndarray, offset: int, op: memref.ViewOp) -> np.ndarray:
    """The array a static `memref.view` names: bytes of `arena` from `offset` on (inside it:
    `check_before_running` checked the plan)."""
    view_type = op.result.type
    assert isinstance(view_type, MemRefType)
    dtype = element_dtype(view_type.element_type)
    shape = tuple(view_type.get_shape())
    nbytes = math.prod(shape) * dtype.itemsize
    return arena[offset : offset + nbytes].view(dtype).reshape(shape)


def _subview(source: np.ndarray, op: memref.SubviewOp) -> np.ndarray:
    """The numpy view a static `memref.subview` describes (it aliases `source`)."""
    return source[subview_slices(op)]


def run_function(
    module: ModuleOp,
    inputs: Sequence[np.ndarray],
    *,
    entry: str | None = None,
    source_path: str | None = None,
) -> tuple[np.ndarray, ...]:
    """Runs `entry` (default: the only public function) of a verified module on logical input
    arrays and returns its logical results. `source_path` is the .mlir file the module was read
    from; external constants' weights file is found relative to it."""
    return Interpreter(module, source_path=source_path).run(inputs, entry)
