"""What a planned program runs: ops per kernel, the numpy fallbacks among them and why, and the
library implementations behind its kernels that call a library (oneDNN's). The README's main
command prints it, and `benchmarks/zoo_latency` tabulates it per model.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.dispatch import recorded_target
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import ReorderOp
from nnlayout.kernels.providers import registry
from nnlayout.kernels.registry import LIBRARY_FAMILIES, Target
from nnlayout.kernels.targets import get_target
from nnlayout.runtime.binding import chosen_kernel, without_padding


@dataclass
class Census:
    kernels: Counter[str] = field(default_factory=Counter)
    # A kernel of the reference family on a target with faster ones; on a target with a
    # library's kernels (oneDNN's) any numpy kernel but a sparse one; or an op whose layouts
    # no longer match its kernel.
    fallbacks: Counter[str] = field(default_factory=Counter)
    # (kernel, why) -> ops: fallbacks whose op no kernel of some faster family implements
    # (a kernel that exists and refused the op is explained by select-dispatch's remark).
    reasons: Counter[tuple[str, str]] = field(default_factory=Counter)
    implementations: Counter[str] = field(default_factory=Counter)  # the library's: jit:avx2
    # The heading of `implementations`, naming the libraries of the target.
    implementations_title: str = "library implementations"


def _as_bound(op: ComputeOp) -> Operation:
    """The op `op`'s kernel is bound to: its body's op, without its pads where it reads a
    halo-padded input."""
    return op.inner if op.halo is None else without_padding(op)


def library_implementation(op: ComputeOp) -> str | None:
    """The name of the library implementation that runs `op` (its kernel's `implementation`:
    for oneDNN's, its primitive, from the cache the loaded module filled), e.g.
    'brgconv_1x1:avx2'; where the library offers only its reference code (a program loaded
    on a CPU with fewer features), numpy runs the op, and the name says so:
    'numpy (oneDNN: ref:any)'. None for a reorder, an op without a kernel, or a kernel of
    nnlayout's own."""
    chosen = None if isinstance(op.inner, ReorderOp) else kernel_of(op.inner)
    if chosen is None:
        return None
    return registry().lookup(chosen.kernel_name.data).implementation(_as_bound(op))


def kernel_census(planned: ModuleOp, target: Target | None = None) -> Census:
    """The census of `planned` (reorders are not counted), compiled for `target`: by default
    the target `select-dispatch` recorded on the module."""
    if target is None:
        recorded = recorded_target(planned)
        if recorded is None:
            raise ValueError("the module records no target: select-dispatch has not run on it")
        target = get_target(recorded)
    libraries = [family for family in target.families if family in LIBRARY_FAMILIES]
    census = Census()
    ran: set[str] = set()  # the library families whose kernels the program runs
    for op in planned.walk():
        if not isinstance(op, ComputeOp) or isinstance(op.inner, ReorderOp):
            continue
        chosen = kernel_of(op.inner)
        if chosen is None:
            census.kernels["(no kernel)"] += 1
            continue
        name = chosen.kernel_name.data
        census.kernels[name] += 1
        descriptor = registry().lookup(name)
        family, bound = descriptor.family, _as_bound(op)
        if chosen_kernel(bound) is None:
            census.fallbacks[f"{name} (layouts changed: reference kernel)"] += 1
        elif target.families != ("ref",) and (
            family == "ref" or (libraries and family not in LIBRARY_FAMILIES and family != "sparse")
        ):
            census.fallbacks[name] += 1
            faster = target.families[: target.families.index(family)]
            offered = {kernel.family for kernel in registry().for_op(type(op.inner))}
            if missing := [other for other in faster if other not in offered]:
                families = " or ".join(filter(None, (", ".join(missing[:-1]), missing[-1])))
                census.reasons[name, f"no {families} kernel implements {op.inner.name}"] += 1
        if (implementation := descriptor.implementation(bound)) is not None:
            census.implementations[implementation] += 1
            ran.add(family)
    # Named by the libraries that run (the target's, where none does): oneDNN's alone in a
    # program that does not run numpy's BLAS as well.
    if named := [family for family in libraries if family in ran] or libraries:
        names = " and ".join(LIBRARY_FAMILIES[family] for family in named)
        census.implementations_title = f"{names} implementations"
    return census
