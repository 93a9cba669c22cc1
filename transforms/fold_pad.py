"""`fold-pad`: a zero `nn.pad` of H and W directly before a convolution becomes part of the
convolution's own pads.

Exporters write an explicit Pad before a convolution where the framework's padding is
asymmetric or written as a layer of its own (`nn.ZeroPad2d`, TensorFlow's "SAME" turned
into explicit pads). The convolution pads with zeros anyway, and its kernels (oneDNN's, the
blocked GEMM) do it without a copy, often reading a halo, while the pad is a pass over
memory of its own:

    %p = nn.pad %x pads [0, 0, 1, 0, 0, 0, 2, 1] mode "constant" value 0.0
        : tensor<1x8x6x6xf32> -> tensor<1x8x9x7xf32>
    %y = nn.conv2d %p, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : ...
  becomes
    %y = nn.conv2d %x, %w strides [1, 1] pads [2, 1, 3, 2] dilations [1, 1] groups 1 : ...

(the pad's [top, left, bottom, right] added to the convolution's). Only a constant pad of
value 0 (+0.0 or -0.0: the convolution sums products, a -0.0 input changes no finite sum)
of the spatial axes folds; reflect and edge pads, a non-zero value, a pad of N or C, and ops
with a kernel already (the pass runs before `select-dispatch`, in `default-pipeline`) are
left as they are. Pooling is not folded: max pooling pads with -inf, average pooling counts
pads only with count_include_pad. The pad stays where something else reads it.
"""

from __future__ import annotations

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
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.nn import ints
from nnlayout.transforms.stages import require_tensor_level


def spatial_zero_pads(pad: nn.PadOp) -> tuple[int, int, int, int] | None:
    """[top, left, bottom, right] of a rank-4 zero constant pad of H and W only, else None."""
    pads = ints(pad.pads)
    if len(pads) != 8 or pad.mode.data != "constant" or pad.value.value.data != 0:
        return None
    if any(pads[axis] or pads[axis + 4] for axis in (0, 1)):
        return None
    return pads[2], pads[3], pads[6], pads[7]


class FoldPadIntoConv(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.Conv2dOp, rewriter: PatternRewriter) -> None:
        pad = op.input.owner
        if not isinstance(pad, nn.PadOp) or kernel_of(op) is not None or kernel_of(pad):
            return
        extra = spatial_zero_pads(pad)
        if extra is None:
            return
        pads = [a + b for a, b in zip(ints(op.pads), extra, strict=True)]
        folded = nn.Conv2dOp(
            pad.input,
            op.weight,
            op.bias,
            strides=ints(op.strides),
            pads=pads,
            dilations=ints(op.dilations),
            groups=op.groups.value.data,
        )
        folded.output.name_hint = op.output.name_hint
        folded.location = op.location
        rewriter.replace(op, folded)
        if not pad.output.uses:
            rewriter.erase(pad)


@dataclass(frozen=True)
class FoldPadPass(ModulePass):
    name = "fold-pad"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        PatternRewriteWalker(FoldPadIntoConv(), apply_recursively=False).rewrite_module(op)
