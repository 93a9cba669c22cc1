"""An out-of-tree pass: relu(relu(x)) is relu(x), as an xDSL rewrite pattern on the nn dialect.

    nnlayout-opt model.mlir --load examples/fold_relu_of_relu.py \\
        -p 'fold-relu-of-relu,default-pipeline'

`register_pass` makes the pass known to `-p` of nnlayout-opt, nnlayout-run and
nnlayout-translate (each takes `--load`). Run it before select-dispatch: an op a pattern makes
after dispatch has no kernel, and the interpreter and generated code run its reference kernel.
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


class ReluOfRelu(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.ReluOp, rewriter: PatternRewriter) -> None:
        if isinstance(op.input.owner, nn.ReluOp):
            rewriter.replace_op(op, [], [op.input])


@register_pass
@dataclass(frozen=True)
class FoldReluOfRelu(ModulePass):
    name = "fold-relu-of-relu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(ReluOfRelu()).rewrite_module(op)
