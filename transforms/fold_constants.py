"""`fold-constants`: pack weights once, at compile time.

A `layout.reorder` of an `nn.constant` (a weight going into `IHW8iO8o`, a bias into `C8c`, a
CSR conversion) becomes a constant of the reordered type: the same stored value (inline or
external), materialised in the new layout when the program is loaded, so no reorder of a
constant runs per inference:

    %w = nn.constant external "conv1.weight" : tensor<64x3x7x7xf32>
    %w8 = layout.reorder %w : tensor<64x3x7x7xf32>
                            -> tensor<64x3x7x7xf32, #layout.layout<"IHWO8o">>
  becomes
    %w8 = nn.constant external "conv1.weight"
              : tensor<64x3x7x7xf32, #layout.layout<"IHWO8o">>

The original constant stays while other ops still use it.

A reorder of a constant expression (`dialects/constant_expressions.py`, e.g. a weight that
`fold-batch-norm` scaled) is itself one and stays as it is: it is packed once, at load, right
after the value it reorders is computed.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from nnlayout.dialects.layout import ReorderOp
from nnlayout.dialects.nn import ConstantOp
from nnlayout.transforms.propagate_layouts import EraseDeadReorder
from nnlayout.transforms.stages import require_tensor_level


class FoldReorderOfConstant(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReorderOp, rewriter: PatternRewriter) -> None:
        constant = op.input.owner
        if not isinstance(constant, ConstantOp):
            return
        result_type = op.output.type
        assert isinstance(result_type, TensorType)
        folded = ConstantOp(
            result_type,
            value=constant.value,
            external=None if constant.external is None else constant.external.data,
        )
        folded.output.name_hint = constant.output.name_hint
        rewriter.replace(op, folded)
        if not constant.output.uses:
            rewriter.erase(constant)


@dataclass(frozen=True)
class FoldConstantsPass(ModulePass):
    name = "fold-constants"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [FoldReorderOfConstant(), EraseDeadReorder()], dce_enabled=False
            ),
        ).rewrite_module(op)
