"""`extend-ranks`: give every operand of a broadcasting element-wise op the result's rank.

numpy and ONNX broadcast an operand of lower rank by prepending axes of size 1: a per-channel
constant [C, 1, 1] against [N, C, H, W] is [1, C, 1, 1]. Older exports (BatchNorm written as
Mul and Add of such constants, PRelu's slope) write the short form. This pass writes the long
one, as an `nn.reshape` of the operand, so that every later stage sees operands of one rank:

    %y = nn.mul %x, %scale : (tensor<1x20x8x8xf32>, tensor<20x1x1xf32>) -> tensor<1x20x8x8xf32>
  becomes
    %s = nn.reshape %scale : tensor<20x1x1xf32> -> tensor<1x20x1x1xf32>
    %y = nn.mul %x, %s : (tensor<1x20x8x8xf32>, tensor<1x20x1x1xf32>) -> tensor<1x20x8x8xf32>

Why here, and not inside each kernel: a layout names the axes of one rank (`NCHW16c` cannot
describe a [C, 1, 1] value), so a shorter operand could neither be given operand 0's layout by
`insert-layouts`/`propagate-layouts` nor be packed by `fold-constants`. Once it has the rank,
the existing rules apply unchanged: the oneDNN and blocked kernels broadcast axes of size 1 of
an operand of the same rank, propagate-layouts reorders it into the blocked layout of the
data, and a constant's reshape is a constant expression, so the constant is reshaped and
packed (padding lanes zero) once, at load. A reshape of a computed value runs per inference;
it copies only the small operand. Zero padding lanes are what the results' padding needs:
0 + 0, 0 * 0, max(0, 0) and prelu(0) are 0; a division's 0 / 0 is NaN, which the kernels
re-zero (its result is never left with the divisor's padding).

The pass runs first in `default-pipeline`; a reshape made for one value is shared by all the
ops that read it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from nnlayout.dialects import nn
from nnlayout.dialects.nn import shape_of
from nnlayout.transforms.stages import require_tensor_level

# The ops that broadcast their operands numpy's way, element by element.
BROADCASTING = (nn.BinaryOp, nn.SumOp, nn.CompareOp, nn.LogicalOp, nn.WhereOp)


def _after_definition(value: SSAValue) -> InsertPoint:
    """Right after `value` is defined: its op, or the start of its block."""
    if isinstance(value.owner, Operation):
        return InsertPoint.after(value.owner)
    assert isinstance(value.owner, Block)
    return InsertPoint.at_start(value.owner)


def extend_ranks(module: ModuleOp) -> None:
    """Reshapes each operand of lower rank than its op's result (see the module doc)."""
    extended: dict[tuple[SSAValue, int], SSAValue] = {}
    for op in list(module.walk()):
        if not isinstance(op, BROADCASTING):
            continue
        rank = len(shape_of(op.results[0]))
        for index, operand in enumerate(op.operands):
            shape = shape_of(operand)
            if len(shape) == rank:
                continue
            if (operand, rank) not in extended:
                reshape = nn.ReshapeOp(operand, (1,) * (rank - len(shape)) + shape)
                reshape.output.name_hint = operand.name_hint
                Rewriter.insert_op(reshape, _after_definition(operand))
                extended[operand, rank] = reshape.output
            op.operands[index] = extended[operand, rank]


@dataclass(frozen=True)
class ExtendRanksPass(ModulePass):
    name = "extend-ranks"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        extend_ranks(op)
