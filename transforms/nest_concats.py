"""`nest-concats`: a concat whose leading inputs are exactly an earlier concat's inputs (same
axis) takes that concat's result instead, so that a chain of growing concats becomes a chain
of two-input ones.

torchvision's DenseNet concatenates *all* of a block's features again before every layer
(`torch.cat(features, 1)`): its export has 58 flat concats of 2 to 25 inputs,
`concat(pool, c1, ..., ck)`, not a chain. Bufferize places each concat's inputs in its
buffer (in place, in nChw16c at batch 1), but a value can be placed in one buffer only, so
every feature was copied into every later concat (531 copies per run of densenet121). Taking
the previous concat's result instead, each concat of a block is the previous one's buffer
grown by one feature, which bufferize places in one buffer per block: no copy is left.

    %a = nn.concat %x, %c1 axis 1 : (tensor<1x64x8x8xf32>, tensor<1x32x8x8xf32>) -> ...
    %b = nn.concat %x, %c1, %c2 axis 1 : (..., tensor<1x32x8x8xf32>) -> tensor<1x128x8x8xf32>
  becomes
    %a = nn.concat %x, %c1 axis 1 : (tensor<1x64x8x8xf32>, tensor<1x32x8x8xf32>) -> ...
    %b = nn.concat %a, %c2 axis 1 : (tensor<1x96x8x8xf32>, ...) -> tensor<1x128x8x8xf32>

Concatenation along one axis is associative, so the result is the same values in the same
order. Only an earlier concat of the same block, on the same axis, whose inputs are exactly
the leading inputs (at least two of them, fewer than the later concat's) is taken; of several,
the longest. The pass runs before `select-dispatch` (in `default-pipeline`, so that the
activation format rule sees the chain) and leaves ops with a kernel alone. Concats are
visited last first, so each matches against its predecessors' inputs as exported.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.transforms.stages import require_tensor_level


def leading_concat(op: nn.ConcatOp) -> nn.ConcatOp | None:
    """The longest earlier concat of `op`'s block on the same axis whose inputs are exactly
    `op`'s leading inputs (at least two, fewer than all), or None."""
    inputs = tuple(op.inputs)
    block = op.parent_block()
    if len(inputs) < 3 or block is None:
        return None
    best: nn.ConcatOp | None = None
    for use in inputs[0].uses:
        earlier = use.operation
        if (
            not isinstance(earlier, nn.ConcatOp)
            or earlier is op
            or earlier.parent_block() is not block
            or not earlier.is_before_in_block(op)
            or kernel_of(earlier) is not None
            or earlier.normalized_axis != op.normalized_axis
        ):
            continue
        count = len(earlier.inputs)
        longer = best is None or count > len(best.inputs)
        if longer and 2 <= count < len(inputs) and tuple(earlier.inputs) == inputs[:count]:
            best = earlier
    return best


class NestConcat(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.ConcatOp, rewriter: PatternRewriter) -> None:
        if kernel_of(op) is not None:
            return
        earlier = leading_concat(op)
        if earlier is None:
            return
        rest: list[SSAValue] = list(op.inputs)[len(earlier.inputs) :]
        nested = nn.ConcatOp([earlier.output, *rest], op.axis.value.data)
        nested.output.name_hint = op.output.name_hint
        nested.location = op.location
        rewriter.replace(op, nested)


@dataclass(frozen=True)
class NestConcatsPass(ModulePass):
    name = "nest-concats"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        PatternRewriteWalker(
            NestConcat(), apply_recursively=False, walk_reverse=True
        ).rewrite_module(op)
