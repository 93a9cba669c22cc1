"""What `run_pipeline` reports around each pass, as MLIR's pass instrumentations do:
the IR before or after chosen passes (`--print-ir-after-all`, `--print-ir-after=PASS`...),
the IR after a pass that failed, and the wall time of each pass (`--time-passes`).

A step of a pass made of passes (`default-pipeline`) is labelled `outer (inner)`, and a
selection naming either matches it: `--print-ir-after=insert-layouts` prints the IR after
default-pipeline's insert-layouts step, `--print-ir-after=default-pipeline` after each step.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.printer import Printer


def step_label(step: ModulePass, outer: ModulePass) -> str:
    """`insert-layouts`, or `default-pipeline (insert-layouts)` for a step of a composite."""
    return outer.name if step is outer else f"{outer.name} ({step.name})"


@dataclass
class PassTiming:
    """Wall seconds per label (a pass, 'parse', 'verify', 'output'), summed over the chunks
    of a split input, in the order first seen."""

    seconds: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def measure(self, label: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[label] = self.seconds.get(label, 0.0) + time.perf_counter() - start

    def report(self) -> str:
        """MLIR's `--mlir-timing` table: seconds and share of the total per label."""
        total = sum(self.seconds.values())
        rule = "===" + "-" * 73 + "==="
        lines = [
            rule,
            "... Execution time report ...".center(79).rstrip(),
            rule,
            f"  Total Execution Time: {total:.4f} seconds",
            "",
            "  ----Wall Time----  ----Name----",
        ]
        for label, seconds in [*self.seconds.items(), ("Total", total)]:
            share = 100.0 * seconds / total if total else 0.0
            lines.append(f"  {seconds:8.4f} ({share:5.1f}%)  {label}")
        return "\n".join(lines) + "\n"


@dataclass
class Instrumentation:
    """The reports `run_pipeline` makes around each step. `print_before`/`print_after` are
    the pass names to dump the IR for, or None for every pass."""

    print_before: Collection[str] | None = ()
    print_after: Collection[str] | None = ()
    print_after_failure: bool = False
    generic: bool = False
    timing: PassTiming | None = None
    stream: IO[str] = field(default_factory=lambda: sys.stderr)

    def before(self, step: ModulePass, outer: ModulePass, module: ModuleOp) -> None:
        if _selected(self.print_before, step, outer):
            self._dump(f"Before {step_label(step, outer)}", module)

    def after(self, step: ModulePass, outer: ModulePass, module: ModuleOp) -> None:
        if _selected(self.print_after, step, outer):
            self._dump(f"After {step_label(step, outer)}", module)

    def failed(self, label: str, module: ModuleOp) -> None:
        """`label` failed (or left IR that does not verify): the IR as it left it."""
        if self.print_after_failure:
            self._dump(f"After {label} Failed", module)

    @contextmanager
    def measure(self, label: str) -> Iterator[None]:
        if self.timing is None:
            yield
            return
        with self.timing.measure(label):
            yield

    def print_timing(self) -> None:
        """The `--time-passes` table, when asked for."""
        if self.timing is not None:
            self.stream.write(self.timing.report())

    def _dump(self, title: str, module: ModuleOp) -> None:
        # MLIR's header, which tools that read mlir-opt's dumps recognise.
        self.stream.write(f"// -----// IR Dump {title} //----- //\n")
        Printer(stream=self.stream, print_generic_format=self.generic).print_op(module)
        self.stream.write("\n\n")
        self.stream.flush()


def _selected(names: Collection[str] | None, step: ModulePass, outer: ModulePass) -> bool:
    return names is None or step.name in names or outer.name in names
