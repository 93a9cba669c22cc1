"""The batch norm `fold-qdq` folds between a dequantize and a quantize (transforms/fold_qdq.py
runs this pattern before its own): a pre-activation network (DenseNet) quantized in the QDQ
form normalises each block's dequantized input in float and quantizes the result again,
three passes over the activation (and a float tensor four times its size) where one
per-channel affine map from integers to integers does; `nn.qbatch_norm` is that map, each
step rounded as the three ops are, so the program computes what it did.

    %d = nn.dequantize %xq {x_scale = dense<0.02> : tensor<f32>, x_zero_point = ...}
    %n = nn.batch_norm %d, %g, %b, %m, %v epsilon 1.0e-05 : (...) -> tensor<1x64x56x56xf32>
    %y = nn.quantize %n {x_scale = dense<0.05> : tensor<f32>, x_zero_point = ...}
  becomes
    %y = nn.qbatch_norm %xq, %g, %b, %m, %v epsilon 1.0e-05 {x_scale = dense<0.02> ...,
        y_scale = dense<0.05> ...} : (...) -> tensor<1x64x56x56xui8>

The pattern: a quantize of a batch norm read by it alone, of a dequantize of u8 or s8 (not
i32: a bias's), both quantized per tensor, none with a kernel chosen. The dequantize stays
where something else reads it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import KERNEL_ATTR


@dataclass
class FoldQBatchNorm(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.QuantizeOp, rewriter: PatternRewriter) -> None:
        norm = op.input.owner
        if not isinstance(norm, nn.BatchNormOp) or not norm.output.has_one_use():
            return
        dequantize = norm.input.owner
        if not isinstance(dequantize, nn.DequantizeOp):
            return
        if nn.tensor_type(dequantize.input).element_type not in nn.QUANTIZED_TYPES:
            return
        x, y = dequantize.qparams(), op.qparams()
        chosen = any(KERNEL_ATTR in o.attributes for o in (op, norm, dequantize))
        if x.per_axis or y.per_axis or chosen:
            return
        vectors = [norm.scale, norm.bias, norm.mean, norm.var]
        folded = nn.QBatchNormOp(dequantize.input, vectors, (x, y), norm.epsilon.value.data)
        folded.location = norm.location
        folded.output.name_hint = op.output.name_hint
        rewriter.replace(op, folded)
        rewriter.erase(norm)
        if not dequantize.output.uses:
            rewriter.erase(dequantize)
