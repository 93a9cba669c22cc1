"""`select-dispatch{target=host padding=true remarks=false}`: choose every op's kernel.

The default target, `host`, is `onednn` where oneDNN loads and else the CPU's best blocked
target (`avx512` or `avx2`); see `kernels/registry.py` for the others.

This runs before layouts are inserted and before memory is planned — the order the MXNet
proposal asked for — so that later passes know each op's preferred layouts, in-place rule and
workspace from the `#nn.kernel<...>` attribute it leaves on the op, instead of asking "is this
the accelerator?".

For each `nn` op the registry's `select` walks the target's kernel families in order of
preference and takes the first kernel whose `accepts` agrees. Every kernel that was preferred
but refused is reported as a remark with its reason, e.g.

    model.mlir:12:3: remark: [select-dispatch] nn.conv2d: grouped convolution (groups=4),
    not supported by conv2d_nchwc; using conv2d_ref

Channel padding (a C=3 input becomes one block of 8 or 16 lanes) is allowed unless
`padding=false`; without it, ops whose channels do not divide the block fall back to plain
kernels. An op that already has a kernel keeps it, if the kernel is registered and implements
the op (else the pass fails there). Constants and constant expressions
(`dialects/constant_expressions.py`) get none: they are evaluated once, when the program is
loaded, not per inference.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import PassFailedException

import nnlayout.transforms.remarks as remarks
from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects.constant_expressions import is_constant_expression
from nnlayout.dialects.kernel_attr import KERNEL_ATTR, kernel_of
from nnlayout.dialects.nn import NNOp
from nnlayout.kernels.providers import registry
from nnlayout.kernels.registry import Target, get_target
from nnlayout.transforms.stages import require_tensor_level


def pass_target(name: str) -> Target:
    """The target a pass option names; an unknown one fails the pass, listing the known."""
    try:
        return get_target(name)
    except KeyError as error:
        raise PassFailedException(str(error.args[0])) from None


@dataclass
class SelectKernel(RewritePattern):
    target: Target
    padding: bool
    print_remarks: bool

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: NNOp, rewriter: PatternRewriter) -> None:
        if (kept := kernel_of(op)) is not None:
            try:  # what the runtime would refuse, said here, where FileCheck tests look
                registry().kernel_for(op, kept.kernel_name.data)
            except KeyError as error:
                raise DiagnosticError(op, str(error.args[0])) from None
            return
        if is_constant_expression(op):
            return
        selection = registry().select(op, self.target, self.padding)
        if selection is None:
            raise DiagnosticError(op, f"no kernel implements {op.name}")
        chosen = selection.kernel
        for rejected_name, reason in selection.rejected:
            remarks.emit(
                op,
                SelectDispatchPass.name,
                f"{reason}, not supported by {rejected_name}; using {chosen.name}",
                self.print_remarks,
            )
        op.attributes[KERNEL_ATTR] = chosen.attribute(op, self.target)
        rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class SelectDispatchPass(ModulePass):
    name = "select-dispatch"

    target: str = "host"
    padding: bool = True
    remarks: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        PatternRewriteWalker(
            SelectKernel(pass_target(self.target), self.padding, self.remarks),
            apply_recursively=False,
        ).rewrite_module(op)
