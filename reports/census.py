"""What a planned program runs: ops per kernel, the numpy fallbacks among them and why, and the
oneDNN implementations behind its oneDNN kernels. The README's main command prints it, and
`benchmarks/zoo_latency` tabulates it per model.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp

from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import ReorderOp
from nnlayout.kernels.providers import registry
from nnlayout.kernels.registry import Target
from nnlayout.runtime.binding import chosen_kernel, without_padding


@dataclass
class Census:
    kernels: Counter[str] = field(default_factory=Counter)
    # A kernel of the reference family on a target with faster ones; on a oneDNN target any
    # numpy kernel but a sparse one; or an op whose layouts no longer match its kernel.
    fallbacks: Counter[str] = field(default_factory=Counter)
    # (kernel, why) -> ops: fallbacks whose op no kernel of some faster family implements
    # (a kernel that exists and refused the op is explained by select-dispatch's remark).
    reasons: Counter[tuple[str, str]] = field(default_factory=Counter)
    implementations: Counter[str] = field(default_factory=Counter)  # oneDNN's, e.g. jit:avx2
    implementations_title: str = "oneDNN implementations"  # how reports head them


def onednn_implementation(op: ComputeOp) -> str:
    """The name of the oneDNN implementation that runs `op` (its primitive, from the cache
    the loaded module filled), e.g. 'brgconv_1x1:avx2'; where oneDNN offers only its
    reference code (a program loaded on a CPU with fewer features), numpy runs the op, and
    the name says so: 'numpy (oneDNN: ref:any)'."""
    from nnlayout.kernels.onednn import kernels as onednn_kernels

    inner = without_padding(op) if op.halo is not None else op.inner
    implementation = onednn_kernels._compiled(inner)[0].pd.implementation
    return (
        implementation
        if onednn_kernels._is_fast(implementation)
        else (f"numpy (oneDNN: {implementation})")
    )


def kernel_census(planned: ModuleOp, target: Target) -> Census:
    """The census of `planned`, compiled for `target` (reorders are not counted)."""
    census = Census()
    for op in planned.walk():
        if not isinstance(op, ComputeOp) or isinstance(op.inner, ReorderOp):
            continue
        chosen = kernel_of(op.inner)
        if chosen is None:
            census.kernels["(no kernel)"] += 1
            continue
        name = chosen.kernel_name.data
        census.kernels[name] += 1
        family = registry().lookup(name).family
        if chosen_kernel(op.inner if op.halo is None else without_padding(op)) is None:
            census.fallbacks[f"{name} (layouts changed: reference kernel)"] += 1
        elif target.families != ("ref",) and (
            family == "ref" or "onednn" in target.families and family not in ("onednn", "sparse")
        ):
            census.fallbacks[name] += 1
            faster = target.families[: target.families.index(family)]
            offered = {kernel.family for kernel in registry().for_op(type(op.inner))}
            if missing := [other for other in faster if other not in offered]:
                families = " or ".join(filter(None, (", ".join(missing[:-1]), missing[-1])))
                census.reasons[name, f"no {families} kernel implements {op.inner.name}"] += 1
        if family == "onednn":
            census.implementations[onednn_implementation(op)] += 1
    return census
