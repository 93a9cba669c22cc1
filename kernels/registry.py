"""The kernel registry: one source of truth for compile time (dispatch, layouts, planning) and
run time (the interpreter and generated code call the same implementations).

A `Kernel` is a descriptor plus its implementation. The descriptor says which op it implements,
which family it belongs to (`ref`, `blocked`, `sparse`, ...), whether it accepts a given op
(`accepts(op, target) -> None | reason`), the layouts it wants for each operand and produces
for each result, which operand its output may overwrite in place, its workspace bytes, and
whether it keeps the zero padding of blocked data zero.

A `Target` is data, not a code path: the kernel families it may use, in order of preference,
and each provider's own options (`ProviderOptions`: a block size, the implementations to
prefer), which the provider declares and alone reads. The built-in targets, `register_target`
and `get_target` are in `kernels/targets.py`.

Implementations take `(op, inputs)` where each input is the operand's run-time value in the
layout the kernel asked for (a numpy array in physical order for a blocked layout, a
scipy.sparse array for CSR), and return the result in the layout the kernel declared.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, Self, runtime_checkable

from xdsl.dialects.builtin import AnyFloat, BFloat16Type, MemRefType, TensorType, i1, i32, i64
from xdsl.ir import Attribute, Operation, SSAValue

from nnlayout.dialects.kernel_attr import ANY_LAYOUT, PLAIN_LAYOUT, KernelAttr, kernel_attr
from nnlayout.dialects.layout import LayoutSpec, encoding_name, layout_of

Implementation = Callable[[Operation, Sequence[Any]], Any]
# A kernel prepared for one op: `bound(inputs, out)` writes the op's result into `out`, a numpy
# array of the result's physical shape (possibly a strided view of a planned buffer).
BoundKernel = Callable[[Sequence[Any], Any], None]
# A call without arguments: a bound kernel bound to its buffers as well (`BindsBuffers`).
FixedCall = Callable[[], None]


class BindingSession:
    """What the kernels prepared in one binding session (one generated Program, one
    Interpreter) tell the kernels prepared after them, by the nn.compute they were prepared
    for (oneDNN's: a bound on the norm of the result it writes). The runtime's `bind_compute`
    passes it to `Kernel.prepare`; a kernel prepared outside a session is given None, and
    prepared kernels then share nothing."""

    __slots__ = ("_told",)

    def __init__(self) -> None:
        self._told: dict[Operation, object] = {}

    def tell(self, compute: Operation, fact: object) -> None:
        """Records what the kernel being prepared for `compute` says about its result."""
        self._told[compute] = fact

    def told(self, compute: Operation) -> object | None:
        """What the kernel last prepared for `compute` in this session said, if anything."""
        return self._told.get(compute)

    def forget(self, compute: Operation) -> None:
        """Drops what the kernel prepared for `compute` said (it is being bound again)."""
        self._told.pop(compute, None)


@runtime_checkable
class BindsBuffers(Protocol):
    """A bound kernel that can also be bound to the very arrays it will always be given
    (generated code passes the same arena views on every run): `on(inputs, out)` does what
    `bound(inputs, out)` does on each call, with what depends on the arrays alone (their
    strides, aliasing, where the primitives point) checked once. The arrays' contents may
    change between calls; the kernel may be called on other arrays in between."""

    def __call__(self, inputs: Sequence[Any], out: Any) -> None: ...

    def on(self, inputs: Sequence[Any], out: Any) -> FixedCall: ...


@dataclass(frozen=True)
class ProviderOptions:
    """A kernel provider's own settings on a target (its block size, the implementations it
    prefers), declared in the provider's module and read by its kernels alone, through
    `of(target)`. Subclasses are frozen dataclasses whose fields all have defaults: a target
    that gives a provider no options of its class gets those."""

    def check(self, target: str) -> None:
        """Raises TypeError where these options cannot be used, naming `target`; subclasses
        with fields that can be malformed override it."""

    @classmethod
    def of(cls, target: Target) -> Self:
        """The options of this class that `target` gives, else the defaults."""
        for options in target.options:
            if isinstance(options, cls):
                return options
        return cls()


@dataclass(frozen=True)
class Target:
    """What a machine offers, as data: the kernel families it may use, in order of
    preference, and each provider's own options (`ProviderOptions`, at most one of a class).
    The built-in targets and the lookup by name are in `kernels/targets.py`."""

    name: str
    description: str
    families: tuple[str, ...]
    options: tuple[ProviderOptions, ...] = ()

    def __post_init__(self) -> None:
        classes = [type(options) for options in self.options]
        if len(set(classes)) != len(classes):
            raise ValueError(f"target {self.name}: options of one class given twice")
        for options in self.options:
            options.check(self.name)

    def with_options(self, *options: ProviderOptions) -> Target:
        """This target with `options` in place of its options of the same classes (a
        plugin's variant of a built-in target)."""
        replaced = {type(new) for new in options}
        kept = tuple(old for old in self.options if type(old) not in replaced)
        return replace(self, options=(*kept, *options))


# The kernel families that call a library's implementations, with the library's name as
# reports print it, known whether or not the library loads here; the other families (`ref`,
# `blocked`, `sparse`) are nnlayout's own numpy code.
LIBRARY_FAMILIES: dict[str, str] = {"onednn": "oneDNN", "blas": "numpy's BLAS"}


def _element_types(op: Operation) -> list[Attribute]:
    return [
        v.type.element_type
        for v in (*op.operands, *op.results)
        if isinstance(v.type, TensorType | MemRefType)
    ]


def _is_float(element_type: Attribute) -> bool:
    return isinstance(element_type, AnyFloat)


def _always(op: Operation, target: Target, padding: bool) -> str | None:
    return None


def _no_workspace(op: Operation, target: Target) -> int:
    return 0


@dataclass(frozen=True)
class Kernel:
    """A kernel descriptor and its implementation."""

    name: str
    op: type[Operation]
    family: str
    impl: Implementation
    # Whether `op` is the kind of op this kernel is for at all (a depthwise kernel applies
    # only to depthwise convolutions, a sparse one only to CSR operands). Kernels that do not
    # apply are not candidates, and their refusal is no news worth a remark.
    applies: Callable[[Operation], bool] = lambda op: True
    # None when the kernel can run `op` on `target` (with channel padding allowed or not),
    # else the reason it cannot, phrased to precede ", not supported by <name>".
    accepts: Callable[[Operation, Target, bool], str | None] = _always
    # (operand layouts, result layouts); PLAIN_LAYOUT, ANY_LAYOUT or a layout string.
    layouts: Callable[[Operation, Target], tuple[tuple[str, ...], tuple[str, ...]]] | None = None
    # For ANY_LAYOUT operands: None when the kernel can consume `layout`, else why not.
    accepts_layout: Callable[[Operation, LayoutSpec], str | None] | None = None
    # For an op typed as insert-layouts types it, before running it: None when the
    # implementation reads the layouts its types carry, else why not (IR dispatched by an
    # older compiler whose kernel declared other layouts, or written by hand).
    accepts_types: Callable[[Operation], str | None] | None = None
    in_place: int | None = None
    # Per op, instead of `in_place`: a broadcasting binary op may write over an operand of
    # the result's shape only, whichever that is.
    in_place_of: Callable[[Operation], int | None] | None = None
    workspace: Callable[[Operation, Target], int] = _no_workspace
    # Whether the kernel pads its input by copying it, so that reading an input laid out
    # with a halo (bufferize) saves that copy; a kernel that pads internally says False.
    reads_halo: bool = True
    # Whether it writes correctly and at full speed into a strided view (a halo's interior,
    # a concat's channel slice); False keeps its outputs in buffers of their own.
    writes_strided: bool = True
    # Whether it also writes its result in any layout that only orders the axes (NHWC) when
    # its record says so: `propagate-layouts` then gives a transpose the layout in which
    # its result has its operand's bytes (a view once bufferized).
    orders_result: bool = False
    priority: int = 0
    # Whether its family can run this op with the add and activation after it applied as
    # post-ops (`fuse-post-ops` then asks that family's kernels for `nn.fused_conv2d`).
    post_ops: bool = False
    # Work done once per op before it runs many times (generated code and the interpreter
    # bind each op at load): returns the kernel bound to `op`, given the binding session it
    # is prepared in (None: none). None: no preparation, `impl` runs on each call and its
    # result is copied into the destination.
    prepare: Callable[[Operation, BindingSession | None], BoundKernel] | None = None
    # For a kernel that calls a library's code: the name of the library's implementation that
    # runs `op` (as bound), which reports print. None: nnlayout's own numpy code.
    implementation_of: Callable[[Operation], str] | None = None
    # Whether it computes on integer (quantized: ui8, i8, i32) operands and results. Only the
    # reference kernels (family `ref`) and kernels that say so are given such ops: the
    # others were written for floats (a blocked max pool pads with -inf, a oneDNN primitive
    # is created for f32). A kernel that says so handles the quantization parameters the op
    # carries (zero points, in its padding too).
    integer_data: bool = False
    # Whether it computes on i1 masks (`nn.compare`'s result, `nn.where`'s operand 0); only
    # the reference kernels and kernels that say so are given them.
    mask_data: bool = False
    # Whether it computes on bf16 operands and results (`convert-to-bf16`'s). Only the
    # reference kernels (in f32, rounded per op) and kernels that say so are given such ops:
    # the blocked numpy kernels would compute in ml_dtypes' bf16 ufuncs, rounding each step.
    bf16_data: bool = False
    # For a kernel that keeps constant operands in a format of its own (oneDNN's packed int8
    # weights, compensation included): by operand index, the bytes each such constant takes
    # once packed and the compensation among them (`dialects/packing.py`), asked by
    # `fold-constants` for `op` as dispatched.
    packed_constants: Callable[[Operation], Mapping[int, tuple[int, int]]] | None = None
    # The operands (by index) whose constant such a kernel keeps packed where it runs the
    # op: those `packed_constants` may name (asked where it refuses an op, for a remark).
    packed_operands: tuple[int, ...] = ()
    # For a kernel that keeps a copy of a constant operand of its own, which no IR records
    # (the BLAS kernel's K x N copy of a transposed Gemm's weights): by operand index, the
    # bytes of that copy, which `plan-memory` counts beside the constant.
    copied_constants: Callable[[Operation], Mapping[int, int]] | None = None

    def operand_and_result_layouts(
        self, op: Operation, target: Target
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        if self.layouts is None:
            return ((PLAIN_LAYOUT,) * len(op.operands), (PLAIN_LAYOUT,) * len(op.results))
        return self.layouts(op, target)

    def refusal(self, op: Operation, target: Target, padding: bool) -> str | None:
        """Why the kernel cannot run `op` (None when it can), asked by dispatch: `accepts`,
        then, where the kernel has `accepts_layout`, that on the layout operand 0 already
        carries (hand-written IR: a layout blocking an axis it pools or broadcasts)."""
        reason = self.integer_refusal(op) or self.accepts(op, target, padding)
        if reason is not None or self.accepts_layout is None:
            return reason
        return carried_layout_refusal(op, self.accepts_layout)

    def integer_refusal(self, op: Operation) -> str | None:
        """Why the kernel cannot run `op` on its integer, bf16, mask or index data, if it has
        some (see `integer_data`, `bf16_data`, `mask_data`; only the reference kernels read
        i64 indices)."""
        if self.family == "ref":
            return None
        types = _element_types(op)
        if not self.bf16_data and any(isinstance(e, BFloat16Type) for e in types):
            return "bf16 data (this kernel computes f32)"
        if i1 in types and not self.mask_data:
            return data_kind(i1)
        if i64 in types:  # only the reference kernels read indices (nn.gather's, token ids)
            return data_kind(i64)
        if self.integer_data:
            return None
        element = next((e for e in types if not _is_float(e) and e != i1), None)
        return None if element is None else data_kind(element)

    def binding_refusal(self, op: Operation) -> str | None:
        """Why the kernel cannot compute `op` as typed (None when it can), asked before
        running an op an `#nn.kernel` names this kernel for, which hand-written IR or an
        older nnlayout's may do wrongly: `applies`, then plain operands and results for a
        kernel without `layouts` (a reference kernel), else `accepts_types`. Not `accepts`
        nor `accepts_layout`: what they refuse may be a matter of speed on one machine
        (oneDNN offering only its reference code for a format on another CPU, which its
        kernels then run in numpy), not of the result; `accepts_types` repeats the rules of
        `accepts` that are of the result. (`runtime.chosen_kernel` also checks the
        attribute's `in_place` against `in_place_for`.)"""
        if not self.applies(op):
            return f"it is not a kernel for this {op.name}"
        if (reason := self.integer_refusal(op)) is not None:
            return reason
        if self.layouts is None:  # plain operands and results, the only ones it reads
            return layouts_refusal(
                op, [(PLAIN_LAYOUT,)] * len(op.operands), [(PLAIN_LAYOUT,)] * len(op.results)
            )
        return None if self.accepts_types is None else self.accepts_types(op)

    def attribute(self, op: Operation, target: Target) -> KernelAttr:
        """The `#nn.kernel<...>` that records this choice on `op`."""
        operands, results = self.operand_and_result_layouts(op, target)
        return kernel_attr(
            self.name, operands, results, self.in_place_for(op), self.workspace(op, target)
        )

    def in_place_for(self, op: Operation) -> int | None:
        """The operand whose buffer the kernel may write its result over, if any."""
        return self.in_place if self.in_place_of is None else self.in_place_of(op)

    def implementation(self, op: Operation) -> str | None:
        """The name of the library implementation that runs `op` with this kernel (see
        `implementation_of`), None for a kernel of nnlayout's own."""
        return None if self.implementation_of is None else self.implementation_of(op)


def data_kind(element: Attribute) -> str:
    """How refusals and remarks name data of a non-float element type: "i1 data (a mask)",
    "i64 data (indices)", "i32 data (integers)", "ui8 data (quantized)"."""
    return _DATA_KINDS.get(element) or f"{element} data (quantized)"


_DATA_KINDS: dict[Attribute, str] = {
    i1: "i1 data (a mask)",
    i64: "i64 data (indices)",
    i32: "i32 data (integers)",
}


class BindingRefused(ValueError):
    """Raised by a kernel's `prepare` or implementation when it cannot compute the op as
    typed (a layout it has no format for, buffers of another size than its primitive's):
    hand-written IR, or a kernel named for other layouts. The runtime reports it at the op."""


def carried_layout_refusal(
    op: Operation, check: Callable[[Operation, LayoutSpec], str | None]
) -> str | None:
    """`check` (an `accepts_layout`) on the layout operand 0 of `op` carries; None for a
    plain operand, or none."""
    spec = layout_of(op.operands[0].type) if op.operands else None
    return None if spec is None else check(op, spec)


def one_layout_refusal(op: Operation, operands: Sequence[int]) -> str | None:
    """Why a kernel that runs in whatever layout operand 0 carries (`"*"`) cannot compute
    `op` as typed: one of `operands` or a result carries another layout, which it would read
    or write as operand 0's. Hand-written types, or an `#nn.kernel` listing layouts that
    contradict its kernel's `"*"`, can do that."""
    first = encoding_name(op.operands[0].type)
    for what, value in _described_values(op, operands):
        if (name := encoding_name(value.type)) != first:
            return (
                f"{what} is {name or 'plain'} but operand 0 is {first or 'plain'}; "
                f'the kernel runs in operand 0\'s layout ("*") only'
            )
    return None


def layouts_refusal(
    op: Operation, operands: Sequence[Collection[str]], results: Sequence[Collection[str]]
) -> str | None:
    """Why not, where an operand or result carries a layout (an `encoding_name`) outside the
    ones given for it, position by position: a kernel reading its arrays in those."""
    for (what, value), allowed in zip(_described_values(op), (*operands, *results), strict=True):
        if (name := encoding_name(value.type)) not in allowed:
            return (
                f"{what} is {name or 'plain'}; the kernel takes it "
                f"{' or '.join(a or 'plain' for a in allowed)}"
            )
    return None


def _described_values(
    op: Operation, operands: Sequence[int] | None = None
) -> list[tuple[str, SSAValue]]:
    """("operand i", value) for `operands` (all by default), then ("result i", value)."""
    chosen = range(len(op.operands)) if operands is None else operands
    return [
        *((f"operand {i}", op.operands[i]) for i in chosen),
        *((f"result {i}", result) for i, result in enumerate(op.results)),
    ]


@dataclass(frozen=True)
class Selection:
    kernel: Kernel
    # (kernel name, reason) for each applicable kernel preferred to the chosen one that did
    # not accept the op: empty unless the op fell back.
    rejected: tuple[tuple[str, str], ...]


class _KernelTable(dict[str, Kernel]):
    """The registry's kernels by name; any change (a test replacing a kernel included) drops
    the lookups remembered by op type."""

    def __init__(self) -> None:
        super().__init__()
        self.by_op: dict[type[Operation], tuple[Kernel, ...]] = {}

    def __setitem__(self, name: str, kernel: Kernel) -> None:
        self.by_op.clear()
        super().__setitem__(name, kernel)

    def __delitem__(self, name: str) -> None:
        self.by_op.clear()
        super().__delitem__(name)

    def pop(self, name: str, *default: Kernel | None) -> Kernel | None:  # type: ignore[override]
        self.by_op.clear()
        return super().pop(name, *default)

    def update(self, *args: Any, **kwargs: Kernel) -> None:
        self.by_op.clear()
        super().update(*args, **kwargs)

    def clear(self) -> None:
        self.by_op.clear()
        super().clear()

    def setdefault(self, name: str, kernel: Kernel) -> Kernel:  # type: ignore[override]
        self.by_op.clear()
        return super().setdefault(name, kernel)

    def popitem(self) -> tuple[str, Kernel]:
        self.by_op.clear()
        return super().popitem()


@dataclass
class Registry:
    # added to by `register`; for_op's answers are remembered by op type until it changes
    kernels: _KernelTable = field(default_factory=_KernelTable)

    def register(self, kernel: Kernel) -> Kernel:
        if kernel.name in self.kernels:
            raise ValueError(f"kernel '{kernel.name}' is registered twice")
        self.kernels[kernel.name] = kernel
        return kernel

    def lookup(self, name: str) -> Kernel:
        if name not in self.kernels:
            raise KeyError(f"no kernel named '{name}' is registered")
        return self.kernels[name]

    def kernel_for(self, op: Operation, name: str) -> Kernel:
        """The kernel `name`, which must implement `op`: an attribute written by hand or by a
        plugin may name any kernel, whose implementation would read attributes the op does
        not have (an internal error, or wrong numbers). KeyError saying why not."""
        kernel = self.lookup(name)
        if kernel.op is not type(op):
            raise KeyError(
                f'#nn.kernel<"{name}"> is a kernel for {kernel.op.name}, not for {op.name}'
            )
        return kernel

    def for_op(self, op_type: type[Operation]) -> list[Kernel]:
        remembered = self.kernels.by_op
        found = remembered.get(op_type)
        if found is None:
            found = remembered[op_type] = tuple(k for k in self.kernels.values() if k.op is op_type)
        return list(found)

    def select(self, op: Operation, target: Target, padding: bool) -> Selection | None:
        """The best kernel for `op` on `target`: among the kernels that apply to it, the first,
        in the order of the target's families and then by priority, that accepts it. None when
        no kernel implements the op at all."""
        rejected: list[tuple[str, str]] = []
        candidates = [
            k for k in self.for_op(type(op)) if k.family in target.families and k.applies(op)
        ]
        candidates.sort(key=lambda k: (target.families.index(k.family), -k.priority))
        for kernel in candidates:
            reason = kernel.refusal(op, target, padding)
            if reason is None:
                return Selection(kernel, tuple(rejected))
            rejected.append((kernel.name, reason))
        return None


def resolve_layouts(declared: Sequence[str], first_operand_layout: str) -> tuple[str, ...]:
    """Replaces ANY_LAYOUT entries by the layout operand 0 actually has: a kernel that takes
    "any" layout takes all such operands, and produces its results, in one layout."""
    return tuple(first_operand_layout if d == ANY_LAYOUT else d for d in declared)
