"""What the passes after `select-dispatch` may ask about the kernel an op's `#nn.kernel<...>`
names, beyond what the attribute itself carries: one function, `kernel_facts`, the only place
a pass looks the chosen kernel up by name, and `KernelFacts`, the list of what it may ask.

`#nn.kernel` carries what the IR can hold and every stage needs: the layouts, the in-place
operand, the workspace. What is asked here stays with the kernel's descriptor:

- `layout_refusal` (propagate-layouts: may this op run in that layout?) is a question about
  a layout the op does not have yet, not a fact an attribute can hold;
- `family` and `post_ops` (fuse-post-ops: which kernels may run the fused op) and
  `reads_halo` and `writes_strided` (bufferize: halos, concat slots) are facts of the kernel,
  not of the op. On the attribute they would be printed on every dispatched op, and a
  hand-written `#nn.kernel` that left them out would contradict the kernel it names; read
  from the descriptor, there is one answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.ir import Operation

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import LayoutSpec
from nnlayout.kernels.providers import registry


@dataclass(frozen=True)
class KernelFacts:
    """What a pass may know of the kernel chosen for an op (see `Kernel` for each)."""

    name: str
    # The provider it belongs to (`ref`, `blocked`, ...): a fused op's kernel is of the same.
    family: str
    # Whether its family runs the op with the add and activation after it as post-ops.
    post_ops: bool
    # Whether it pads its input by copying it, which reading a halo saves.
    reads_halo: bool
    # Whether it writes correctly and at full speed into a strided view.
    writes_strided: bool
    accepts_layout: Callable[[Operation, LayoutSpec], str | None] | None
    # Whether it writes its result in a layout that only orders the axes, when told to.
    orders_result: bool = False

    def layout_refusal(self, op: Operation, layout: LayoutSpec) -> str | None:
        """Why the kernel cannot run `op` with its "any layout" operands in `layout` (None
        when it can); None as well for a kernel that takes every layout."""
        return None if self.accepts_layout is None else self.accepts_layout(op, layout)


def kernel_facts(op: Operation) -> KernelFacts | None:
    """The facts of the kernel `op`'s `#nn.kernel` names; None when `op` has no kernel. A
    kernel not registered in this process (a plugin's not loaded) is an error at `op`, as
    select-dispatch makes it."""
    attribute = kernel_of(op)
    if attribute is None:
        return None
    try:
        kernel = registry().lookup(attribute.kernel_name.data)
    except KeyError as error:
        raise DiagnosticError(op, str(error.args[0])) from None
    return KernelFacts(
        kernel.name,
        kernel.family,
        kernel.post_ops,
        kernel.reads_halo,
        kernel.writes_strided,
        kernel.accepts_layout,
        kernel.orders_result,
    )
