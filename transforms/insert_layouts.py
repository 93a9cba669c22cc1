"""`insert-layouts`: give every op's operands and results the layouts its kernel wants.

This is TVM's AlterOpLayout as a separate pass: `select-dispatch` recorded in `#nn.kernel` the
layout each operand and result should have; here each operand whose type differs gets a
`layout.reorder` in front of the op, and each result whose layout changes gets a reorder back
to its old type after the op, so the rest of the program is untouched:

    %y = nn.conv2d %x, %w, %b ... : (tensor<1x12x8x8xf32>, ...) -> tensor<1x4x8x8xf32>
  becomes
    %x8 = layout.reorder %x : tensor<1x12x8x8xf32> -> tensor<1x12x8x8xf32, #layout.layout<"NCHW8c">>
    %w8 = layout.reorder %w : ... -> tensor<4x12x3x3xf32, #layout.layout<"IHW8iO8o">>
    %y8 = nn.conv2d %x8, %w8, %b8 ... -> tensor<1x4x8x8xf32, #layout.layout<"NCHW8c">>
    %y = layout.reorder %y8 : ... -> tensor<1x4x8x8xf32>

Channels that do not fill a block are padded by the layout itself (C=12 in NCHW8c is two blocks
of 8 lanes, the last 4 zero). A `"*"` layout is the one operand 0 has, whatever its producer
gave: operand 0 needs no reorder, and other `"*"` operands and results (hand-typed in another
layout) are given that one, since the kernel reads and writes them all in it.
Back-to-back reorders this creates are removed by `propagate-layouts`; reorders of constants
are done at compile time by `fold-constants`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

import nnlayout.transforms.remarks as remarks
from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects.constant_expressions import is_constant_expression
from nnlayout.dialects.kernel_attr import ANY_LAYOUT, KernelAttr, kernel_of
from nnlayout.dialects.layout import ReorderOp, encoding_name, with_encoding_name
from nnlayout.dialects.nn import NNOp
from nnlayout.kernels.registry import resolve_layouts
from nnlayout.transforms.stages import require_tensor_level


def reorder_to(value: SSAValue, layout: str) -> ReorderOp:
    """A reorder of `value` into `layout` (in `#nn.kernel` vocabulary), not yet inserted."""
    value_type = value.type
    assert isinstance(value_type, TensorType)
    reorder = ReorderOp(value, with_encoding_name(value_type, layout))
    reorder.output.name_hint = value.name_hint
    return reorder


class InsertOperandReorders(RewritePattern):
    """Reorders each operand into the layout the op's kernel wants."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: NNOp, rewriter: PatternRewriter) -> None:
        kernel = kernel_of(op)
        if kernel is None:
            return
        if len(kernel.operands) != len(op.operands):
            raise DiagnosticError(
                op,
                f"{kernel} lists {len(kernel.operands)} operand layouts "
                f"but the op has {len(op.operands)} operands",
            )
        wanted_layouts = _resolved(op, kernel, kernel.operands)
        for index, (operand, wanted) in enumerate(zip(op.operands, wanted_layouts, strict=True)):
            if encoding_name(operand.type) == wanted:
                continue
            reorder = reorder_to(operand, wanted)
            reorder.location = op.location  # its errors are about this op's kernel
            rewriter.insert(reorder, InsertPoint.before(op))
            op.operands[index] = reorder.output
            rewriter.notify_op_modified(op)


def change_result_layout(rewriter: PatternRewriter, result: OpResult, layout: str) -> None:
    """Gives `result` the layout `layout` and a reorder back to its old type, which takes
    over all its existing uses."""
    old_type = result.type
    assert isinstance(old_type, TensorType)
    new_result = rewriter.replace_value_with_new_type(result, with_encoding_name(old_type, layout))
    back = ReorderOp(new_result, old_type)
    back.location = result.op.location
    back.output.name_hint = new_result.name_hint
    rewriter.replace_uses_with_if(new_result, back.output, lambda use: use.operation is not back)
    rewriter.insert(back, InsertPoint.after(result.op))


class InsertResultReorders(RewritePattern):
    """Gives each result the kernel's layout and reorders it back for the existing users."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: NNOp, rewriter: PatternRewriter) -> None:
        kernel = kernel_of(op)
        if kernel is None:
            return
        for result, wanted in zip(op.results, _resolved(op, kernel, kernel.results), strict=True):
            if encoding_name(result.type) != wanted:
                change_result_layout(rewriter, result, wanted)


def _resolved(op: Operation, kernel: KernelAttr, declared: Sequence[str]) -> tuple[str, ...]:
    """`declared` layouts of `kernel` (`op`'s) with `"*"` standing for the one operand 0 has,
    or will have."""
    first = kernel.operands[0] if kernel.operands else ANY_LAYOUT
    if first == ANY_LAYOUT:
        first = encoding_name(op.operands[0].type) if op.operands else ""
    return resolve_layouts(declared, first)


@dataclass(frozen=True)
class InsertLayoutsPass(ModulePass):
    name = "insert-layouts"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        _remark_undispatched(op)
        for pattern in (InsertOperandReorders(), InsertResultReorders()):
            PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)


def _remark_undispatched(module: ModuleOp) -> None:
    """Once select-dispatch has run, an op without a kernel was made after it (by a pattern
    of the user's, say): it keeps its layouts and runs its reference kernel; say so. Before
    it has run, the whole pass does nothing; say that once. (Constants and constant
    expressions never get a kernel: they are evaluated at load.)"""
    known: dict[Operation, bool] = {}
    ops = [
        op for op in module.walk() if isinstance(op, NNOp) and not is_constant_expression(op, known)
    ]
    undispatched = [op for op in ops if kernel_of(op) is None]
    if ops and len(undispatched) == len(ops):  # nothing dispatched: layouts left, on purpose
        remarks.emit(
            ops[0],
            InsertLayoutsPass.name,
            "no op has a kernel (select-dispatch has not run): every layout is left as it is",
        )
        return
    for op in undispatched:
        remarks.emit(
            op,
            InsertLayoutsPass.name,
            "has no kernel (made after "
            "select-dispatch?): it keeps its layouts and runs its reference kernel",
        )
