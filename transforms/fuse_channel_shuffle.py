"""`fuse-channel-shuffle`: ShuffleNet's Reshape-Transpose-Reshape becomes one
`nn.channel_shuffle`.

Exporters write the channel shuffle (`x.view(n, g, c // g, h, w).transpose(1, 2)
.reshape(n, c, h, w)`) as three data-movement ops over a rank-5 tensor, which no blocked
kernel can run: in a blocked network each cost a numpy copy between two reorders. As one op
it has kernels in the operand's layout (oneDNN's shuffle on nChw8c/nChw16c, the blocked
family's lane gather), so the data stays blocked:

    %r = nn.reshape %x : tensor<1x116x7x7xf32> -> tensor<1x2x58x7x7xf32>
    %t = nn.transpose %r perm [0, 2, 1, 3, 4] : tensor<1x2x58x7x7xf32> -> tensor<1x58x2x7x7xf32>
    %y = nn.reshape %t : tensor<1x58x2x7x7xf32> -> tensor<1x116x7x7xf32>
  becomes
    %y = nn.channel_shuffle %x groups 2 : tensor<1x116x7x7xf32>

The pattern needs exactly that: a rank-4 [N, C, H, W] value split as [N, g, C / g, H, W], the
group axes swapped (perm [0, 2, 1, 3, 4]) and merged back into [N, C, H, W]; the reshapes and
the transpose not yet dispatched (it runs before `select-dispatch`, in `default-pipeline`).
Anything else (another perm, another split, another final shape) is left as it is. The
intermediate ops are erased where nothing else reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.nn import ints, shape_of
from nnlayout.transforms.stages import require_tensor_level

GROUP_SWAP = (0, 2, 1, 3, 4)


def shuffle_groups(final: nn.ReshapeOp) -> int | None:
    """The group count when `final` ends a channel shuffle, else None."""
    transpose = final.input.owner
    if not isinstance(transpose, nn.TransposeOp) or ints(transpose.perm) != GROUP_SWAP:
        return None
    split = transpose.input.owner
    if not isinstance(split, nn.ReshapeOp):
        return None
    x = shape_of(split.input)
    grouped = shape_of(split.output)
    if len(x) != 4 or shape_of(final.output) != x or len(grouped) != 5:
        return None
    n, c, h, w = x
    groups = grouped[1]
    if grouped != (n, groups, c // groups, h, w) or c % groups:
        return None
    if any(kernel_of(op) is not None for op in (split, transpose, final)):
        return None
    return groups


class FuseChannelShuffle(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.ReshapeOp, rewriter: PatternRewriter) -> None:
        groups = shuffle_groups(op)
        if groups is None:
            return
        transpose = op.input.owner
        assert isinstance(transpose, nn.TransposeOp)
        split = transpose.input.owner
        assert isinstance(split, nn.ReshapeOp)
        shuffle = nn.ChannelShuffleOp(split.input, groups)
        shuffle.output.name_hint = op.output.name_hint
        shuffle.location = op.location
        rewriter.replace(op, shuffle)
        dead: list[Operation] = [transpose, split]
        for intermediate in dead:
            if not intermediate.results[0].uses:
                rewriter.erase(intermediate)


@dataclass(frozen=True)
class FuseChannelShufflePass(ModulePass):
    name = "fuse-channel-shuffle"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        PatternRewriteWalker(FuseChannelShuffle(), apply_recursively=False).rewrite_module(op)
