"""`fold-scatter-transposes`: a scatter between a transpose and its inverse scatters along the
original axis, and neither transpose is left.

torch's dynamo exporter writes `cache[:, :, pos] = k` (a key/value cache written at the
step's position) as ScatterND of rows: the cache is transposed to put the written axis first,
scattered, and transposed back, which copies the whole cache twice a step. The same result is
the scatter of the untransposed cache along the axis the transpose had moved (`perm[axis]`),
of the updates transposed back, which cancels where they were transposed the same way:

    %t = nn.transpose %cache perm [2, 0, 1, 3] : tensor<1x2x8x4xf32> -> tensor<8x1x2x4xf32>
    %r = nn.transpose %k perm [2, 0, 1, 3] : tensor<1x2x1x4xf32> -> tensor<1x1x2x4xf32>
    %s = nn.scatter %t, %pos, %r axis 0 : (tensor<8x1x2x4xf32>, tensor<1xi64>,
         tensor<1x1x2x4xf32>) -> tensor<8x1x2x4xf32>
    %y = nn.transpose %s perm [1, 2, 0, 3] : tensor<8x1x2x4xf32> -> tensor<1x2x8x4xf32>
  becomes
    %y = nn.scatter %cache, %pos, %k axis 2 : (tensor<1x2x8x4xf32>, tensor<1xi64>,
         tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32>

The scatter must have no other reader and the ops no kernel yet (it runs before
`select-dispatch`, in `default-pipeline`); updates not transposed by the same permutation are
transposed back by a new `nn.transpose`. The transposes are erased where nothing else reads
them.
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
from xdsl.rewriter import InsertPoint

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.nn import ints, inverse_permutation
from nnlayout.transforms.stages import require_tensor_level


class FoldScatterTransposes(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.TransposeOp, rewriter: PatternRewriter) -> None:
        scatter = op.input.owner
        if not isinstance(scatter, nn.ScatterOp) or not scatter.output.has_one_use():
            return
        inner = scatter.data.owner
        if not isinstance(inner, nn.TransposeOp):
            return
        perm = ints(inner.perm)
        if inverse_permutation(perm) != ints(op.perm):
            return
        if any(kernel_of(o) is not None for o in (op, scatter, inner)):
            return
        updates: SSAValue = scatter.updates
        moved = updates.owner
        if isinstance(moved, nn.TransposeOp) and ints(moved.perm) == perm:
            updates = moved.input
        else:
            back = nn.TransposeOp(updates, list(ints(op.perm)))
            back.location = op.location
            rewriter.insert(back, InsertPoint.before(op))
            updates = back.output
        axis = perm[scatter.axis.value.data]
        folded = nn.ScatterOp(inner.input, scatter.indices, updates, axis, scatter.combined)
        folded.output.name_hint = op.output.name_hint
        folded.location = scatter.location
        rewriter.replace(op, folded)
        rewriter.erase(scatter)
        for transpose in (inner, moved):
            if isinstance(transpose, nn.TransposeOp) and not transpose.output.uses:
                rewriter.erase(transpose)


@dataclass(frozen=True)
class FoldScatterTransposesPass(ModulePass):
    name = "fold-scatter-transposes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        PatternRewriteWalker(FoldScatterTransposes(), apply_recursively=False).rewrite_module(op)
