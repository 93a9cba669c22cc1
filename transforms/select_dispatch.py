"""`select-dispatch{target=host padding=true remarks=false activation-format=auto}`: choose
every op's kernel.

The default target, `host`, is `onednn` where oneDNN loads and else the CPU's best blocked
target (`avx512` or `avx2`); see `kernels/targets.py` for the others. On `host`,
`activation-format=auto` lets a measured rule run a module's activations in nChw16c
(`onednn-nchw16c`) instead of NHWC, with a remark saying why (transforms/activation_format.py);
`nhwc` and `nchw16c` force either. The module then records the target it was dispatched for.

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
kernels. (The pass reads no environment: the command-line tools turn
NNLAYOUT_DISABLE_PADDING=1 into `padding=false`.) An op that already has a kernel keeps it, if
the kernel is registered and implements the op (else the pass fails there). Constants and
constant expressions (`dialects/constant_expressions.py`) get none: they are evaluated once,
when the program is loaded, not per inference.

The module records the target and the padding choice (`dialects/dispatch.py`), for the passes
after it that choose kernels too (`fuse-post-ops`, through `recorded_choices`):

    builtin.module {
      func.func @f(...) { ... nn.conv2d ... }
    }
  becomes, with `select-dispatch{target=avx512}`,
    builtin.module attributes {nnlayout.target = "avx512", nnlayout.padding = true} {
      func.func @f(...) { ... nn.conv2d ... {kernel = #nn.kernel<"conv2d_nchwc", ...>} }
    }
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from xdsl.context import Context
from xdsl.dialects.builtin import AnyFloat, ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import PassFailedException

import nnlayout.transforms.remarks as remarks
from nnlayout.diagnostics import DiagnosticError, location_of
from nnlayout.dialects.constant_expressions import is_constant_expression
from nnlayout.dialects.dispatch import (
    PADDING_ATTR,
    TARGET_ATTR,
    record_dispatch,
    recorded_padding,
    recorded_target,
)
from nnlayout.dialects.kernel_attr import KERNEL_ATTR, kernel_of
from nnlayout.dialects.nn import NNOp
from nnlayout.kernels.providers import registry
from nnlayout.kernels.registry import Target, data_kind
from nnlayout.kernels.targets import get_target, host_blocked_target
from nnlayout.transforms.activation_format import dispatch_target
from nnlayout.transforms.stages import require_tensor_level

_Choice = TypeVar("_Choice", str, bool)


def pass_target(name: str) -> Target:
    """The target a pass option names; an unknown one fails the pass, listing the known."""
    try:
        return get_target(name)
    except KeyError as error:
        raise PassFailedException(str(error.args[0])) from None


def recorded_choices(
    module: ModuleOp, target: str | None, padding: bool | None
) -> tuple[Target, bool]:
    """The target and padding a pass after `select-dispatch` selects kernels with: those the
    module records, which an option given (not None) must repeat, else it is an error at the
    module; where the module records none, the option's, else `host` and padding on. A
    `target=host` agrees with the blocked target `host` became for this module
    (`activation-format=auto`)."""
    recorded = recorded_target(module)
    if target == "host" and recorded is not None and recorded == host_blocked_target()[0]:
        target = recorded
    chosen_target = _agreed(module, "target", TARGET_ATTR, recorded, target)
    chosen_padding = _agreed(module, "padding", PADDING_ATTR, recorded_padding(module), padding)
    return (
        pass_target("host" if chosen_target is None else chosen_target),
        True if chosen_padding is None else chosen_padding,
    )


def _agreed(
    module: ModuleOp, option: str, attribute: str, recorded: _Choice | None, given: _Choice | None
) -> _Choice | None:
    """The recorded choice, else the given one; both, differing, are an error."""
    if recorded is None or given is None or given == recorded:
        return given if recorded is None else recorded
    spelled = str(given).lower() if isinstance(given, bool) else given
    raise DiagnosticError(
        _blame(module),
        f"{option}={spelled}, but the module was dispatched with {attribute} = "
        f"{module.attributes[attribute]} (recorded by select-dispatch): leave {option} out, "
        "or give the same",
    )


def _blame(module: ModuleOp) -> Operation:
    """Where an error about the module's records is shown: the module, when it was written
    out (and has a location), else its first dispatched op."""
    if location_of(module) is not None:
        return module
    dispatched = (op for op in module.walk() if kernel_of(op) is not None)
    return next(dispatched, module)


def _integer_data(op: Operation) -> str | None:
    """What `data_kind` says of the first operand or result that is not a float ("i1 data
    (a mask)", "i32 data (integers)", ...), else None."""
    for value in (*op.operands, *op.results):
        element = getattr(value.type, "element_type", None)
        if element is not None and not isinstance(element, AnyFloat):
            return data_kind(element)
    return None


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
        faster = [f for f in self.target.families if f != "ref"]
        integer = _integer_data(op) if chosen.family == "ref" and faster else None
        if integer is not None and not selection.rejected:
            remarks.emit(
                op,
                SelectDispatchPass.name,
                f"{integer}: no {'/'.join(faster)} kernel computes {op.name} on it; using "
                f"{chosen.name}",
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
    activation_format: str = "auto"  # host's: auto, nhwc or nchw16c (activation_format.py)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        target, changed = dispatch_target(op, self.target, self.activation_format)
        if changed is not None:
            remarks.emit(changed[0], SelectDispatchPass.name, changed[1], self.remarks)
        PatternRewriteWalker(
            SelectKernel(pass_target(target), self.padding, self.remarks),
            apply_recursively=False,
        ).rewrite_module(op)
        record_dispatch(op, target, self.padding)
