"""Constant expressions: values computed from constants alone, once, when a program is loaded.

An `nn.constant` is one; so is any pure `nn` op or `layout.reorder` that no kernel was chosen
for and whose operands are all constant expressions, transitively. A pass that folds
parameters (`fold-batch-norm`: weight * scale / sqrt(var + eps)) cannot compute the result
itself, because external weights are only read when the program is loaded; it writes the
arithmetic as such ops instead, and every later stage treats them like `nn.constant`: they
get no kernel, no buffer and no time in the memory plan, and the interpreter and the
generated module evaluate them once, at load, with the reference kernels (IREE's const-eval
hoisting, done at load time rather than at compile time).

An op that has a kernel (`#nn.kernel`) runs on every inference, whatever its operands: that
keeps the choice `select-dispatch` made, and lets the check stop at the first dispatched op.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.traits import Pure

from nnlayout.dialects.compute import operands_outside
from nnlayout.dialects.kernel_attr import KERNEL_ATTR
from nnlayout.dialects.layout import ReorderOp
from nnlayout.dialects.nn import ConstantOp, NNOp


def is_constant_expression(op: Operation, known: dict[Operation, bool] | None = None) -> bool:
    """Whether `op` is a constant expression (module doc). `known` memoizes answers for a
    caller asking about many ops of an IR it does not change meanwhile; without it, each call
    explores the op's operands anew (few ops, since the walk stops at any dispatched op or
    block argument)."""
    known = {} if known is None else known
    pending = [op]
    while pending:  # depth first, without recursion: chains of constant ops may be long
        current = pending[-1]
        if current in known:
            pending.pop()
            continue
        if isinstance(current, ConstantOp):
            known[current] = True
            pending.pop()
            continue
        if (
            not isinstance(current, NNOp | ReorderOp)
            or not current.has_trait(Pure)
            or KERNEL_ATTR in current.attributes
            or not current.operands
        ):
            known[current] = False
            pending.pop()
            continue
        owners = [operand.owner for operand in current.operands]
        if any(not isinstance(owner, Operation) or known.get(owner) is False for owner in owners):
            known[current] = False  # reads a block argument or a value computed per run
            pending.pop()
            continue
        unknown = [owner for owner in owners if owner not in known]
        if unknown:
            pending.extend(unknown)  # decide the operands first, then this op again
            continue
        known[current] = True
        pending.pop()
    return known[op]


def is_constant(value: SSAValue) -> bool:
    """Whether `value` is computed at load, from constants only."""
    return isinstance(value.owner, Operation) and is_constant_expression(value.owner)


def is_constant_operand(op: Operation, value: SSAValue) -> bool:
    """Whether `value`, an operand of `op`, is a constant expression (an nn.constant, or ops
    on constants computed at load, such as a dense layer's transposed weights), possibly on
    its way to a layout, or, for the op in an nn.compute's body, a load-time constant."""
    found = operands_outside(op)
    if found is not None:
        return isinstance(found[1][value].type, TensorType)
    owner = value.owner
    if isinstance(owner, ReorderOp):
        owner = owner.input.owner
    return isinstance(owner, Operation) and is_constant_expression(owner)
