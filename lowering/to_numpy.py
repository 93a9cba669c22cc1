"""The numpy back end: a planned function as a standalone, readable Python module.

`translate` writes three files for a function that went through `plan-memory`:

- `NAME.py`, the generated module: one `ARENA` (64-byte aligned bytes, `ARENA_BYTES` long),
  every planned buffer a named `numpy.ndarray` view of it with its shape, offset and strides
  written out, halo interiors and concat slots as slices of those views, constants (and
  constant expressions, evaluated by the reference kernels) and kernels bound once at import,
  and `run(*inputs) -> tuple` calling one kernel per line, in program order, into the planned
  views. A kernel whose operands are all arena views and constants (the same arrays on every
  run) is also bound to them at import (`kI = PROGRAM.on(I, ins, outs)`, run as `kI()`): what
  depends on the arrays alone is checked once, not per run, which is most of the Python
  between two oneDNN calls. Once they are bound, the module drops its names of the constants
  only such kernels read (`del`, `PROGRAM.release_constants()`): each kernel keeps what it
  reads, a packed copy alone where it packs one (`lowering/program.py`);
- `NAME.planned.mlir`, the planned IR: kernels need their op (attributes, types), so the
  module parses it at import with nnlayout's parser and binds kernel i to the i-th
  `nn.compute` (`Program`, below, shared with nothing but the generated code);
- `NAME.weights.npz`, a copy of the weights file, when the IR has external constants.

Safety: no string from the model is ever spliced into code. SSA names become identifiers only
through a strict sanitiser (`[A-Za-z_][A-Za-z0-9_]*`, no keyword, builtin or dunder, else
`v{n}`); the entry's name and file names are `repr()` literals; comments keep only a small
set of harmless characters. Everything else in the code is numbers.
"""

from __future__ import annotations

import builtins
import hashlib
import importlib.util
import keyword
import math
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from types import ModuleType
from typing import IO

import numpy as np
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    TensorType,
)
from xdsl.ir import Operation, SSAValue

from nnlayout.diagnostics import DiagnosticError, UserError, os_error_reason
from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import FillBorderOp, ReorderOp, encoding_name
from nnlayout.dialects.plan import ARENA_BYTES, is_arena
from nnlayout.dialects.weights import (
    WEIGHTS_ATTR,
    WEIGHTS_HASH_ATTR,
    WeightsError,
    attach_weights_file,
    check_weights_hash,
    weights_path,
)
from nnlayout.files import Outputs, file_sha256, open_input, refuse_overwriting_inputs
from nnlayout.ir.printer import print_module
from nnlayout.kernels.values import element_dtype
from nnlayout.lowering.program import (
    Program,
    load_time_constants,
    per_run_values,
    released_constants,
)
from nnlayout.runtime.binding import chosen_kernel
from nnlayout.runtime.interpreter import find_entry
from nnlayout.runtime.plan_check import check_before_running
from nnlayout.runtime.values import (
    reinterpret,
    reinterpreted_shape,
    subview_slices,
)

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Names the generated module defines or uses itself, which no value may take.
_RESERVED = frozenset(
    {
        *keyword.kwlist,
        *keyword.softkwlist,
        *dir(builtins),
        "np",
        "ENTRY",
        "PLANNED_IR",
        "PROGRAM",
        "K",
        "ARENA",
        "ARENA_BYTES",
        "aligned_empty",
        "fill_border",
        "Program",
        "run",
        "inputs",
    }
)
_COMMENT_UNSAFE = re.compile(r"[^A-Za-z0-9_%=()\[\],.:*+<> -]")


# --------------------------------------------------------------------------- emitting
def _comment(text: str) -> str:
    """`text` reduced to characters that are harmless in a comment, on one line."""
    return _COMMENT_UNSAFE.sub("?", text)


def _number(value: float) -> str:
    """A Python literal for a float, infinities and NaN included."""
    if math.isnan(value):
        return "np.nan"
    if math.isinf(value):
        return "np.inf" if value > 0 else "-np.inf"
    return repr(float(value))


def _dims(shape: Sequence[int]) -> str:
    return "x".join(str(d) for d in shape)


def _describe(value: SSAValue) -> str:
    """`1x64x56x56 NCHW8c`: a tensor's logical shape and layout, for comments."""
    value_type = value.type
    if not isinstance(value_type, TensorType):
        return str(value_type)
    return f"{_dims(value_type.get_shape())} {encoding_name(value_type)}".rstrip()


def describe_compute(op: ComputeOp) -> str:
    """`nn.conv2d (conv2d_onednn) 1x64x56x56 NHWC`: what an `nn.compute` runs, with which
    kernel, into what (the generated code's comments, the profile's rows)."""
    inner = op.inner
    if isinstance(inner, ReorderOp):
        what = (
            f"{inner.name} {_describe(inner.input)} -> "
            f"{encoding_name(inner.output.type) or 'plain'}"
        )
    else:
        kernel = kernel_of(inner)
        chosen = "reference" if kernel is None else kernel.kernel_name.data
        what = f"{inner.name} ({chosen}) {_describe(inner.results[0])}"
    if op.halo is not None:
        what += f" halo {list(op.halo_values or ())}"
    return what


def _dtype_code(dtype: np.dtype) -> str:
    """The Python expression of a buffer's dtype in generated code (bf16: ml_dtypes'; a
    mask's bool as `np.bool_`, which numpy 1.x has too, where `np.bool` is numpy 2's)."""
    if dtype.name == "bfloat16":
        return "ml_dtypes.bfloat16"
    return "np.bool_" if dtype == np.bool_ else f"np.{dtype.name}"


def _tuple(items: Sequence[str]) -> str:
    """A tuple display: `(a,)`, `(a, b)`."""
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _index(slices: Sequence[slice], shape: Sequence[int]) -> str:
    """The subscript of a slice tuple: `[:, 0:8]`, whole axes as `:`, trailing ones dropped."""
    parts = []
    for piece, size in zip(slices, shape, strict=True):
        if piece.start == 0 and piece.stop == size and piece.step == 1:
            parts.append(":")
        else:
            parts.append(
                f"{piece.start}:{piece.stop}" + ("" if piece.step == 1 else f":{piece.step}")
            )
    while parts and parts[-1] == ":":
        parts.pop()
    return f"[{', '.join(parts)}]" if parts else "[...]"


@dataclass
class _Emitter:
    """Writes the Python lines of one planned function: `load` at import, `body` in run()."""

    names: dict[SSAValue, str] = field(default_factory=dict)
    used: set[str] = field(default_factory=lambda: set(_RESERVED))
    counter: int = 0
    indices: dict[SSAValue, int] = field(default_factory=dict)
    per_run: set[SSAValue] = field(default_factory=set)  # arguments and views of them
    at_load: frozenset[Operation] = frozenset()  # constant expressions
    loaded: frozenset[Operation] = frozenset()  # those the generated code reads
    released: frozenset[Operation] = frozenset()  # of those, the ones only bound kernels read
    dropped: list[str] = field(default_factory=list)  # the names of the released ones
    load: list[str] = field(default_factory=list)
    body: list[str] = field(default_factory=list)
    arena_bytes: int | None = None
    constants: int = 0
    computes: int = 0

    def name(self, value: SSAValue) -> str:
        """A fresh identifier for `value`: its SSA name if that is a plain Python identifier
        (not a keyword, builtin or dunder), else `v{n}`; `_1`, `_2`... when taken."""
        hint = value.name_hint
        if hint is None or not _IDENTIFIER.fullmatch(hint) or hint.startswith("__"):
            while f"v{self.counter}" in self.used:
                self.counter += 1
            hint = f"v{self.counter}"
        self.names[value] = name = self.fresh(hint)
        return name

    def fresh(self, hint: str) -> str:
        """`hint` (an identifier), or `hint_1`, `hint_2`... if it is taken; now taken."""
        name, suffix = hint, 0
        while name in self.used:
            suffix += 1
            name = f"{hint}_{suffix}"
        self.used.add(name)
        return name

    def ref(self, value: SSAValue, op: Operation) -> str:
        if value not in self.names:
            raise DiagnosticError(
                op,
                "nnlayout-translate: an operand is not a buffer, "
                "constant or argument the generated code knows",
            )
        return self.names[value]

    def emit(self, op: Operation) -> None:
        if isinstance(op, memref.AllocOp):
            self._alloc(op)
        elif isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            self.indices[op.result] = op.value.value.data
        elif isinstance(op, memref.ViewOp):
            self._view(op)
        elif isinstance(op, memref.SubviewOp):
            source_type = op.source.type
            assert isinstance(source_type, MemRefType)
            index = _index(subview_slices(op), source_type.get_shape())
            self._alias(op, f"{self.ref(op.source, op)}{index}")
        elif isinstance(op, memref.ReinterpretCastOp):
            shape = reinterpreted_shape(op)
            if shape is None:
                reinterpret(np.empty(0), op)  # its located error
            self._alias(op, f"{self.ref(op.source, op)}.reshape({shape})")
        elif isinstance(op, FillBorderOp):
            axes = tuple(int(a) for a in op.axes.get_values())
            halo = tuple(int(h) for h in op.halo.get_values())
            self.body.append(
                f"fill_border({self.ref(op.buffer, op)}, {axes}, {halo}, "
                f"{_number(op.value.value.data)})"
            )
        elif isinstance(op, memref.CopyOp):
            self.body.append(f"{self.ref(op.destination, op)}[...] = {self.ref(op.source, op)}")
        elif op in self.at_load:
            if op in self.loaded:  # the others are only read by constant expressions
                value = op.results[0]
                if op in self.released:
                    self.dropped.append(self.name(value))
                self.load.append(
                    f"{self.names[value] if op in self.released else self.name(value)} = "
                    f"PROGRAM.constants[{self.constants}]  "
                    f"# {_comment(f'%{value.name_hint}: {_describe(value)}')}"
                )
                self.constants += 1
        elif isinstance(op, ComputeOp):
            self._compute(op)
        elif isinstance(op, func.ReturnOp):
            self.body.append(
                f"return {_tuple([f'np.array({self.ref(v, op)})' for v in op.arguments])}"
            )
        else:
            raise DiagnosticError(op, f"nnlayout-translate cannot translate '{op.name}'")

    def _alias(self, op: memref.SubviewOp | memref.ReinterpretCastOp, expression: str) -> None:
        """Names `expression`, a numpy view of `op`'s source, as `op`'s result: once at load
        for a view of a buffer, on each run for a view of an argument."""
        line = f"{self.name(op.result)} = {expression}"
        if op.source in self.per_run:
            self.per_run.add(op.result)
            self.body.append(line)
        else:
            self.load.append(line)

    def _memref(self, op: Operation, value: SSAValue) -> tuple[MemRefType, np.dtype]:
        value_type = value.type
        if (
            not isinstance(value_type, MemRefType)
            or any(d < 0 for d in value_type.get_shape())
            or not isinstance(value_type.layout, NoneAttr)
        ):
            raise DiagnosticError(
                op,
                f"the generated module needs statically shaped, "
                f"contiguous buffers, not {value_type}",
            )
        return value_type, element_dtype(value_type.element_type)

    def _alloc(self, op: memref.AllocOp) -> None:
        memref_type, dtype = self._memref(op, op.memref)
        shape = tuple(memref_type.get_shape())
        nbytes = math.prod(shape) * dtype.itemsize
        if self.arena_bytes is None and is_arena(op):
            self.arena_bytes = nbytes
            self.names[op.memref] = "ARENA"
            return
        self.load.append(
            f"{self.name(op.memref)} = np.ndarray({shape}, {_dtype_code(dtype)}, "
            f"buffer=aligned_empty({nbytes}))  # a buffer of its own"
        )

    def _view(self, op: memref.ViewOp) -> None:
        if op.byte_shift not in self.indices or op.sizes:
            raise DiagnosticError(op, "the generated module needs views at constant offsets")
        memref_type, dtype = self._memref(op, op.result)
        shape = tuple(memref_type.get_shape())
        strides: tuple[int, ...] = ()
        step = dtype.itemsize
        for size in reversed(shape):  # C order, in bytes
            strides, step = (step, *strides), step * size
        offset = self.indices[op.byte_shift]
        nbytes = math.prod(shape) * dtype.itemsize
        self.load.append(
            f"{self.name(op.result)} = np.ndarray({shape}, {_dtype_code(dtype)}, "
            f"buffer={self.ref(op.source, op)}, offset={offset}, strides={strides})  "
            f"# bytes {offset}..{offset + nbytes}"
        )

    def _compute(self, op: ComputeOp) -> None:
        if not isinstance(op.inner, ReorderOp):
            chosen_kernel(op.inner)  # an unknown kernel name is an error now, not at import
        what = describe_compute(op)
        ins = _tuple([self.ref(v, op) for v in op.ins])
        outs = _tuple([self.ref(v, op) for v in op.outs])
        result = self.ref(op.outs[0], op) if op.outs else "?"
        comment = f"# {_comment(f'%{result} = {what}')}"
        if self.per_run.isdisjoint(op.operands):
            # The same arena views and constants on every run: bound to them once.
            step = self.fresh(f"k{self.computes}")
            self.load.append(f"{step} = PROGRAM.on({self.computes}, {ins}, {outs})")
            self.body.append(f"{step}()  {comment}")
        else:
            self.body.append(f"K[{self.computes}]({ins}, {outs})  {comment}")
        self.computes += 1


def _check_planned(function: func.FuncOp) -> None:
    signature = function.function_type
    if len(function.body.blocks) != 1:
        raise DiagnosticError(function, "the generated module needs single-block functions")
    if ARENA_BYTES not in function.attributes or any(
        isinstance(t, TensorType) for t in (*signature.inputs, *signature.outputs)
    ):
        raise DiagnosticError(
            function,
            f"@{function.sym_name.data} is not planned: "
            "the generated module needs bufferized IR with a memory plan; "
            "run the pipeline first, e.g. -p 'default-pipeline{target=avx2}'",
        )
    check_before_running(function)  # here, to locate errors in the translated file


def _release(dropped: Sequence[str]) -> list[str]:
    """The lines that drop the module's and PROGRAM's references to the constants only
    kernels bound at load read (`dropped`): each kernel keeps what it reads, a packed copy
    alone where it packs one (`Program.release_constants`)."""
    lines = [
        "",
        "# Constants only the kernels bound above read: each keeps what it reads (a kernel that",
        "# packs one, the packed copy alone), the plain arrays no kernel reads are freed.",
    ]
    if dropped:
        lines.append("del (")
        line = "   "
        for name in dropped:
            if len(line) + len(name) + 2 > 95:
                lines.append(line)
                line = "   "
            line += f" {name},"
        lines += [line, ")"]
    return [*lines, "PROGRAM.release_constants()"]


def generate(function: func.FuncOp, ir_name: str, ir_sha256: str | None = None) -> str:
    """The Python source of the module running the planned `function`, whose IR it finds in
    the file `ir_name` beside itself (whose text has the SHA-256 `ir_sha256`, if given)."""
    _check_planned(function)
    at_load, loaded = load_time_constants(function)
    released = released_constants(function)
    emitter = _Emitter(
        at_load=at_load,
        loaded=frozenset(loaded),
        released=frozenset(op for op, r in zip(loaded, released, strict=True) if r),
        per_run=per_run_values(function),
    )
    arguments = [emitter.name(arg) for arg in function.args]
    for op in function.body.block.ops:
        emitter.emit(op)
    arena_bytes = emitter.arena_bytes or 0
    unpack = f"{_tuple(arguments)} = " if arguments else ""
    lines = [
        '"""A planned nnlayout function as a numpy program, generated by nnlayout-translate.',
        "",
        "Every buffer is a view of one arena at the byte offset the memory planner chose; the",
        "kernels are nnlayout's, bound once at import to the ops of the planned IR in PLANNED_IR",
        "(beside this file), whose constants are packed into their layouts once. run(*inputs)",
        "takes the function's logical input arrays and returns copies of its results.",
        "Generated code: do not edit.",
        '"""',
        "",
        *(["import ml_dtypes"] if any("ml_dtypes." in line for line in emitter.load) else []),
        "import numpy as np",
        "",
        "from nnlayout.runtime.values import aligned_empty, fill_border",
        "from nnlayout.lowering.program import Program",
        "",
        f"ENTRY = {function.sym_name.data!r}",
        f"PLANNED_IR = {ir_name!r}",
        f"PLANNED_IR_SHA256 = {ir_sha256!r}  # checked at load: the IR of this very write",
        "PROGRAM = Program.load(__file__, PLANNED_IR, ENTRY, PLANNED_IR_SHA256)",
        "K = PROGRAM.kernels  # K[i](ins, outs) runs the i-th nn.compute of the planned IR",
        "# kI = PROGRAM.on(I, ins, outs): K[I] bound to the same views on every run, kI()",
        "",
        "# numpy.empty(ARENA_BYTES, numpy.uint8), 64-byte aligned",
        f"ARENA_BYTES = {arena_bytes}",
        "ARENA = aligned_empty(ARENA_BYTES)",
        "",
        "# Buffers (views of the arena at their planned offsets) and constants, in program order",
        *emitter.load,
        *_release(emitter.dropped),
        "",
        "",
        "def run(*inputs: np.ndarray) -> tuple[np.ndarray, ...]:",
        '    """Runs ENTRY on its logical input arrays; returns copies of its results. Calls',
        '    from several threads take turns: they share the arena."""',
        '    with PROGRAM.running, np.errstate(all="ignore"):',
        f"        {unpack}PROGRAM.arguments(inputs)",
        *(f"        {line}" for line in emitter.body),
    ]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Translation:
    """The files `translate` wrote."""

    code: Path
    ir: Path
    weights: Path | None


def translate(
    module: ModuleOp, output: Path, *, source_path: str | None = None, entry: str | None = None
) -> Translation:
    """Writes the generated module `output`, the planned IR and a copy of the weights beside
    it (see the module doc), all or nothing (`files.Outputs`: the weights, then the IR, then
    the code). The IR records the SHA-256 of the weights, the code that of the IR: a module
    loaded with files of another write is refused. `module` (read from `source_path`, which
    locates its weights) is not changed."""
    function = find_entry(module, entry)
    ir_path = output.with_name(output.stem + ".planned.mlir")
    try:
        source_weights = weights_path(module, source_path)
    except WeightsError as error:
        raise UserError(str(error)) from None
    weights = None if source_weights is None else output.with_name(output.stem + ".weights.npz")
    copied = weights is not None and not _same_file(weights, source_weights)
    refuse_overwriting_inputs(
        [output, ir_path, *([weights] if copied else [])], [source_path, source_weights]
    )
    with Outputs() as outputs:
        pair = None
        if weights is not None and source_weights is not None:
            if copied:
                _copy_weights(outputs, source_weights, weights)
            try:
                sha256 = file_sha256(outputs.written(weights))
            except OSError as error:
                raise UserError(
                    f"cannot read weights file '{source_weights}': {os_error_reason(error)}"
                ) from None
            try:  # a copy of a weights file not of the module is no pair either
                check_weights_hash(module, source_path, source_weights, sha256)
            except WeightsError as error:
                raise UserError(str(error)) from None
            pair = (weights.name, sha256)
        text = StringIO()
        _print_naming_weights(module, pair, text)
        outputs.write_text(ir_path, text.getvalue())
        ir_sha256 = hashlib.sha256(text.getvalue().encode()).hexdigest()
        outputs.write_text(output, generate(function, ir_path.name, ir_sha256))
    return Translation(output, ir_path, weights)


def _print_naming_weights(module: ModuleOp, pair: tuple[str, str] | None, stream: IO[str]) -> None:
    """Prints `module` as if it named the weights file and hash `pair` (None: as it is),
    leaving it unchanged, without copying it (a copy of a large module costs as much as
    printing it)."""
    old = {name: module.attributes.get(name) for name in (WEIGHTS_ATTR, WEIGHTS_HASH_ATTR)}
    if pair is not None:
        attach_weights_file(module, *pair)
    try:
        print_module(module, stream)
    finally:
        for name, value in old.items():
            if value is None:
                module.attributes.pop(name, None)
            else:
                module.attributes[name] = value


def _same_file(one: Path, other: Path | None) -> bool:
    try:
        return other is not None and (one.resolve() == other.resolve() or one.samefile(other))
    except OSError:
        return False


def _copy_weights(outputs: Outputs, source: Path, target: Path) -> None:
    """The bytes of the weights file `source` to `target` (a regular file only)."""
    try:
        reading = open_input(source)
    except OSError as error:
        raise UserError(f"cannot read weights file '{source}': {os_error_reason(error)}") from None
    with reading, outputs.open(target, "wb") as handle:
        try:
            shutil.copyfileobj(reading, handle)
        except OSError as error:
            raise UserError(
                f"cannot copy the weights file '{source}' to '{target}': {os_error_reason(error)}"
            ) from None


def import_generated(path: Path) -> ModuleType:
    """Imports the generated module at `path` (which loads its planned IR and weights)."""
    spec = importlib.util.spec_from_file_location(f"nnlayout_generated_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    generated = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generated)
    return generated


@contextmanager
def generated_module(
    module: ModuleOp, *, source_path: str | None = None, entry: str | None = None
) -> Iterator[ModuleType]:
    """`module` translated into a temporary directory and imported, while the block runs."""
    with tempfile.TemporaryDirectory(prefix="nnlayout-translate-") as folder:
        translation = translate(
            module, Path(folder) / "model.py", source_path=source_path, entry=entry
        )
        try:
            generated = import_generated(translation.code)
        except UserError:
            # Located in the temporary planned IR, gone with the folder: binding `module`
            # itself meets the same error at the op in the user's own file.
            Program(module, entry, source_path)
            raise
        try:
            yield generated
        except DiagnosticError as error:  # at run time: an op of the temporary planned IR
            raise _in_module(error, generated.PROGRAM.function, module, entry) from None


def _in_module(
    error: DiagnosticError, translated: func.FuncOp, module: ModuleOp, entry: str | None
) -> DiagnosticError:
    """`error` at the op of `module` that its op in `translated` (the entry function of the
    planned IR the generated module loaded, gone with its folder) was printed from: the same
    place in the same walk. Unchanged where the walks differ."""
    ops = list(translated.walk())
    ours = list(find_entry(module, entry).walk())
    at = next((i for i, op in enumerate(ops) if op is error.op), None)
    if at is None or len(ops) != len(ours):
        return error
    return DiagnosticError(ours[at], error.message)


def run_generated(
    module: ModuleOp,
    inputs: Sequence[np.ndarray],
    *,
    source_path: str | None = None,
    entry: str | None = None,
) -> tuple[np.ndarray, ...]:
    """Runs the generated module of `module` once on `inputs` (`nnlayout-run --backend
    generated` does this within `generated_module`, to profile the same module after)."""
    with generated_module(module, source_path=source_path, entry=entry) as generated:
        return generated.run(*inputs)
