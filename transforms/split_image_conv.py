"""`split-image-conv`: a CNN's 7x7 stem over its 3 image channels becomes one convolution per
input channel, summed: short float32 sums, as onnxruntime's NCHWc stem computes them.

A stem's reduction is long (7 x 7 taps x 3 channels = 147 products per output) and its
rounding is the first a deep network amplifies: summed as one sequence, fcn_resnet50's stem
alone made every target 1.3 to 1.6 times farther from a float64 evaluation than
onnxruntime, which sums one input channel at a time, and left the whole network 1.2e-4 from
onnxruntime on the oneDNN targets (docs/benchmarks.md, "fcn_resnet50 against float64"). The
numpy targets sum per channel inside their kernels (kernels/reference.py,
`summed_per_channel`); a oneDNN convolution has one order of its own, so the split is made
in the graph, where every target sees it and oneDNN runs it as a convolution per channel
accumulating into one buffer (`fuse-post-ops` turns each add into its `sum` post-op, and the
activation after the stem into the last one's eltwise post-op):

    %y = nn.conv2d %x, %w, %b strides [2, 2] pads [3, 3, 3, 3] dilations [1, 1] groups 1
        : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>)
        -> tensor<1x64x112x112xf32>
  becomes
    %x0 = nn.slice %x starts [0, 0, 0, 0] sizes [1, 1, 224, 224] steps [1, 1, 1, 1] : ...
    %w0 = nn.slice %w starts [0, 0, 0, 0] sizes [64, 1, 7, 7] steps [1, 1, 1, 1] : ...
    %c0 = nn.conv2d %x0, %w0 strides [2, 2] pads [3, 3, 3, 3] ... -> tensor<1x64x112x112xf32>
    %x1 = nn.slice %x starts [0, 1, 0, 0] ...
    %w1 = nn.slice %w starts [0, 1, 0, 0] ...
    %c1 = nn.conv2d %x1, %w1 ...
    %s1 = nn.add %c1, %c0 : ...
    (channel 2 likewise, with the bias %b on its convolution)
    %y = nn.add %c2, %s1 : ...

The sum is the same in real arithmetic (a convolution is linear in its input channels, and
each channel's window and padding are those of the whole), so the split keeps semantics;
what moves is float32 rounding, toward onnxruntime's. The weight slices are constant
expressions, evaluated once at load. It applies to an ungrouped float32 `nn.conv2d` without a
kernel, of 2 to `IMAGE_CHANNELS` input channels and at least `MIN_TAPS` window taps, whose
weight (and bias) are constant expressions; a 3x3 stem's 27-term sums are left whole. It
runs before `select-dispatch`, after `fold-batch-norm` and `fold-pad` (which change the
weight and pads it splits).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from nnlayout.dialects import nn
from nnlayout.dialects.constant_expressions import is_constant
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.nn import ints, shape_of
from nnlayout.kernels.reference import IMAGE_CHANNELS
from nnlayout.transforms.stages import require_tensor_level

# Window taps from which a channel's sum is split off: a 7x7 stem (49) is, a 3x3 one (9) is not.
MIN_TAPS = 49


def splits(op: nn.Conv2dOp) -> bool:
    """Whether `op` is an image convolution the pass splits (module doc)."""
    weight = shape_of(op.weight)
    return (
        kernel_of(op) is None
        and op.groups.value.data == 1
        and getattr(op.input.type, "element_type", None) == f32
        and 2 <= weight[1] <= IMAGE_CHANNELS
        and math.prod(weight[2:]) >= MIN_TAPS
        and is_constant(op.weight)
        and (op.bias is None or is_constant(op.bias))
    )


def _channel(value: SSAValue, channel: int) -> nn.SliceOp:
    """`value[:, channel:channel + 1]`, as an `nn.slice` of axis 1."""
    shape = shape_of(value)
    starts = [0, channel] + [0] * (len(shape) - 2)
    return nn.SliceOp(value, starts, [shape[0], 1, *shape[2:]])


class SplitImageConv(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.Conv2dOp, rewriter: PatternRewriter) -> None:
        if not splits(op):
            return
        window = {
            "strides": ints(op.strides),
            "pads": ints(op.pads),
            "dilations": ints(op.dilations),
        }
        channels = shape_of(op.weight)[1]
        new: list[Operation] = []
        total: SSAValue | None = None
        for channel in range(channels):
            last = channel == channels - 1
            source, weight = _channel(op.input, channel), _channel(op.weight, channel)
            conv = nn.Conv2dOp(source.output, weight.output, op.bias if last else None, **window)
            new += [source, weight, conv]
            if total is None:
                total = conv.output
                continue
            add = nn.AddOp(conv.output, total)
            new.append(add)
            total = add.output
        base = op.output.name_hint or "conv"
        for created in new:
            created.location = op.location
            created.results[0].name_hint = f"{base}_part"
        assert total is not None
        total.name_hint = op.output.name_hint
        rewriter.replace(op, new, [total])


@dataclass(frozen=True)
class SplitImageConvPass(ModulePass):
    name = "split-image-conv"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        PatternRewriteWalker(
            GreedyRewritePatternApplier([SplitImageConv()]), apply_recursively=False
        ).rewrite_module(op)
