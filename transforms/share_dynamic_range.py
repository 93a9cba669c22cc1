"""`share-dynamic-range`: the scale and the zero point of a DynamicQuantizeLinear read their
input's range once, from one `nn.dynamic_range`, rather than each reading the whole input.

Why: the importer writes DynamicQuantizeLinear as three ops of one result each
(`dialects/nn/integer.py`); `nn.dynamic_scale` and `nn.dynamic_zero_point` each take the
minimum and the maximum of the same activation, two passes over it each, before every
integer product of a dynamically quantized model (figures: docs/benchmarks-int8.md).
`nn.dynamic_range` makes those two passes once and writes [min(0, min(x)), max(0, max(x))];
the scale and the zero point of that range are those of x (it holds 0, its minimum and its
maximum are x's range; a NaN or an infinity in x is there too), so the program computes
what it did, bit for bit.

    %s = nn.dynamic_scale %x : tensor<4x8xf32> -> tensor<f32>
    %z = nn.dynamic_zero_point %x : tensor<4x8xf32> -> tensor<ui8>
  becomes
    %r = nn.dynamic_range %x : tensor<4x8xf32> -> tensor<2xf32>
    %s = nn.dynamic_scale %r : tensor<2xf32> -> tensor<f32>
    %z = nn.dynamic_zero_point %r : tensor<2xf32> -> tensor<ui8>

The pattern: an `nn.dynamic_scale` of x and at least one `nn.dynamic_zero_point` of x in its
block, none with a kernel chosen; the range goes before the first of them. A scale or zero
point alone, or one already reading a range, is left as it is. It runs before
`select-dispatch`, after `fuse-integer-scale` in `default-pipeline`.
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
from xdsl.rewriter import InsertPoint

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import KERNEL_ATTR
from nnlayout.transforms.stages import require_tensor_level


@dataclass
class ShareDynamicRange(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.DynamicScaleOp, rewriter: PatternRewriter) -> None:
        x = op.input
        if isinstance(x.owner, nn.DynamicRangeOp):
            return
        block = op.parent_block()
        readers: list[Operation] = [op] + [
            use.operation
            for use in x.uses
            if isinstance(use.operation, nn.DynamicZeroPointOp)
            and use.operation.parent_block() is block
        ]
        if len(readers) < 2 or any(KERNEL_ATTR in reader.attributes for reader in readers):
            return
        assert block is not None
        first = min(readers, key=block.get_operation_index)
        shared = nn.DynamicRangeOp(x)
        shared.location = op.location
        if x.name_hint is not None:
            shared.output.name_hint = f"{x.name_hint}_range"
        rewriter.insert(shared, InsertPoint.before(first))
        rewriter.replace_uses_with_if(x, shared.output, lambda use: use.operation in readers)


@dataclass(frozen=True)
class ShareDynamicRangePass(ModulePass):
    name = "share-dynamic-range"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        PatternRewriteWalker(ShareDynamicRange(), apply_recursively=False).rewrite_module(op)
