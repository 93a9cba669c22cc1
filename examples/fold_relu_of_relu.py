"""`fold-relu-of-relu`: relu(relu(x)) is relu(x); an out-of-tree pass, written as an xDSL
rewrite pattern on the nn dialect (docs/tutorial.md builds it step by step).

Why: relu is idempotent, max(max(x, 0), 0) = max(x, 0), NaN included (both keep NaN), so the
outer relu is a copy of the inner one's result: one kernel call and one buffer fewer.

    %a = nn.relu %x : tensor<4xf32>
    %b = nn.relu %a : tensor<4xf32>
  becomes
    %a = nn.relu %x : tensor<4xf32>

with every use of %b reading %a. Run it on tensor-level IR, before select-dispatch:

    nnlayout-opt model.mlir --load examples/fold_relu_of_relu.py \\
        -p 'fold-relu-of-relu,default-pipeline'

`register_pass` makes the pass known to `-p` of nnlayout-opt, nnlayout-run and
nnlayout-translate (each takes `--load`).
"""

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

from nnlayout.dialects import nn
from nnlayout.transforms import register_pass
from nnlayout.transforms.stages import require_tensor_level


class ReluOfRelu(RewritePattern):
    """relu(relu(x)) -> relu(x): the outer relu's uses read the inner one."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.ReluOp, rewriter: PatternRewriter) -> None:
        if isinstance(op.input.owner, nn.ReluOp):
            rewriter.replace(op, [], [op.input])


@register_pass
@dataclass(frozen=True)
class FoldReluOfRelu(ModulePass):
    name = "fold-relu-of-relu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)  # after bufferize, relus sit inside nn.compute: refuse
        PatternRewriteWalker(ReluOfRelu()).rewrite_module(op)
