"""Where a generated module's time goes: every `nn.compute` of its planned function timed over
repeated runs, as `nnlayout-run --backend generated --profile N` prints it.

The profiler wraps the module's bound kernels (`kI`, and `K[i]` for those called with
per-run arrays) in timers for the runs it makes and puts the originals back afterwards, so
the code measured is the code shipped: the gap between the sum of the ops and a whole run is
what `run()` does around them (checking its arguments, writing halo borders with
`fill_border`, copying its results) and the Python between the calls. A run before the timed
ones (unless the caller just made one) warms caches and creates deferred primitives. Times
are medians over the runs, per op and per whole run.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import ReorderOp
from nnlayout.kernels.registry import LIBRARY_FAMILIES
from nnlayout.lowering.to_numpy import Program, describe_compute
from nnlayout.reports.census import library_implementation


@dataclass
class OpProfile:
    index: int  # of the nn.compute, in program order (the generated code's K[index])
    what: str
    kernel: str  # the kernel's name: "(reorder)", or "reference" for an op without one
    implementation: str  # the library's (oneDNN's), '' for a numpy kernel
    seconds: list[float] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        return 1e3 * statistics.median(self.seconds) if self.seconds else 0.0


@dataclass
class Profile:
    entry: str
    runs: list[float]  # seconds of each whole run
    ops: list[OpProfile]

    def report(self) -> str:
        """Each op in program order, then the time per kernel (and library implementation),
        largest first."""
        total = sum(op.median_ms for op in self.ops)
        run_ms = 1e3 * statistics.median(self.runs)
        lines = [
            f"profile of @{self.entry}: {len(self.runs)} run(s), median {run_ms:.3f} ms "
            f"per run, of which the ops {total:.3f} ms",
            f"{'#':>5} {'ms':>9} {'%':>6}  op",
        ]
        for op in self.ops:
            implementation = f" [{op.implementation}]" if op.implementation else ""
            lines.append(
                f"{op.index:>5} {op.median_ms:9.3f} {_share(op.median_ms, total):6.1f}"
                f"  {op.what}{implementation}"
            )
        by_kernel: dict[str, list[float]] = defaultdict(list)
        for op in self.ops:
            implementation = f" [{op.implementation}]" if op.implementation else ""
            by_kernel[op.kernel + implementation].append(op.median_ms)
        libraries = " or ".join(LIBRARY_FAMILIES.values())
        lines += ["", f"{'ms':>9} {'%':>6} {'ops':>5}  kernel [{libraries} implementation]"]
        for label, times in sorted(by_kernel.items(), key=lambda item: -sum(item[1])):
            lines.append(
                f"{sum(times):9.3f} {_share(sum(times), total):6.1f} {len(times):>5}  {label}"
            )
        return "\n".join(lines)


def _share(part: float, whole: float) -> float:
    return 100.0 * part / whole if whole else 0.0


def _timed(call: Callable[..., Any], record: list[float]) -> Callable[..., Any]:
    def timed(*args: Any) -> Any:
        start = time.perf_counter()
        try:
            return call(*args)
        finally:
            record.append(time.perf_counter() - start)

    return timed


def _describe_kernel(op: ComputeOp) -> tuple[str, str]:
    """(kernel name, library implementation or '') of `op`, named as `describe_compute`
    does."""
    if isinstance(op.inner, ReorderOp):
        return "(reorder)", ""
    chosen = kernel_of(op.inner)
    if chosen is None:
        return "reference", ""
    return chosen.kernel_name.data, library_implementation(op) or ""


def profile(
    generated: ModuleType, inputs: Sequence[np.ndarray], runs: int, warm_up: bool = True
) -> Profile:
    """Runs the imported generated module once (unless not `warm_up`: the caller just ran
    it), then `runs` times with each op timed."""
    program: Program = generated.PROGRAM
    computes = [op for op in program.function.body.block.ops if isinstance(op, ComputeOp)]
    if warm_up:  # also fills the library's cache (oneDNN's), which names the implementations
        generated.run(*inputs)
    ops = [
        OpProfile(index, describe_compute(op), *_describe_kernel(op))
        for index, op in enumerate(computes)
    ]
    bound_index = {id(call): index for index, call in program.bound.items()}
    bound_names = {
        name: bound_index[id(value)]
        for name, value in vars(generated).items()
        if id(value) in bound_index
    }
    originals = list(program.kernels)
    whole: list[float] = []
    try:
        for name, index in bound_names.items():
            setattr(generated, name, _timed(getattr(generated, name), ops[index].seconds))
        program.kernels[:] = [
            _timed(kernel, op.seconds) for kernel, op in zip(originals, ops, strict=True)
        ]
        for _ in range(runs):
            start = time.perf_counter()
            generated.run(*inputs)
            whole.append(time.perf_counter() - start)
    finally:
        program.kernels[:] = originals
        for name, index in bound_names.items():
            setattr(generated, name, program.bound[index])
    return Profile(program.function.sym_name.data, whole, ops)
