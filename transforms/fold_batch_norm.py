"""`fold-batch-norm{remarks=false}`: an inference batch norm after a convolution becomes part
of the convolution's weight and bias.

    batch_norm(conv(x, W, b)) = (conv(x, W, b) - mean) * s + bias
                              = conv(x, W * s[o], (b - mean) * s + bias)
    with s = scale / sqrt(var + eps)

since the convolution is linear in its weight and bias, per output channel o. External weights
are only read when the program is loaded, so the pass cannot compute W * s itself: it writes
the arithmetic as `nn` ops on the parameters, which are constant expressions
(`dialects/constant_expressions.py`): no kernel runs them per inference, they are evaluated
once at load. On ResNet-like graphs this removes every batch norm, and its pass over memory:

    %c = nn.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1
        : (tensor<1x8x16x16xf32>, tensor<16x8x3x3xf32>, tensor<16xf32>) -> tensor<1x16x16x16xf32>
    %y = nn.batch_norm %c, %scale, %bias, %mean, %var epsilon 1.0e-05 : (...) -> ...
  becomes
    %0 = nn.constant dense<1.0e-05> : tensor<16xf32>
    %1 = nn.add %var, %0 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %2 = nn.sqrt %1 : tensor<16xf32>
    %3 = nn.div %scale, %2 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %4 = nn.reshape %3 : tensor<16xf32> -> tensor<16x1x1x1xf32>
    %w_1 = nn.mul %w, %4 : (tensor<16x8x3x3xf32>, tensor<16x1x1x1xf32>) -> tensor<16x8x3x3xf32>
    %5 = nn.sub %b, %mean : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %6 = nn.mul %5, %3 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %b_1 = nn.add %6, %bias : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %c_1 = nn.conv2d %x, %w_1, %b_1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1
        : (...) -> tensor<1x16x16x16xf32>

Folding reassociates float32 arithmetic, as every framework's folding does: s (y - mean)
becomes s y - s mean, so where y is close to mean and |s mean| is large against the result,
the result keeps only the low bits the two products do not share (its error grows with
|s mean| / |result|), and where s mean overflows the bias is infinite and a finite y gives
NaN. Trained statistics are far from this (the zoo agrees with onnxruntime, which folds the
same way, within 1e-5); constants built to provoke it are not computed as written.

A convolution without bias gets a zero one (`dense<0.0>`). The pattern applies when the batch
norm's input is a convolution used by nothing else (its own result would otherwise still be
needed), whose weight and bias and the batch norm's parameters are constant expressions, and
neither op has a kernel yet: the pass runs before `select-dispatch`, first in
`default-pipeline`. A batch norm that reads anything else (DenseNet's come before their
convolution) is left as it is; where the input is a convolution but the pattern does not
apply, a remark says why.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    ModuleOp,
    f32,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

import nnlayout.transforms.remarks as remarks
from nnlayout.dialects import nn
from nnlayout.dialects.constant_expressions import is_constant
from nnlayout.dialects.kernel_attr import KERNEL_ATTR
from nnlayout.transforms.stages import require_tensor_level


def _splat(like: SSAValue, length: int, value: float) -> nn.ConstantOp:
    """A constant vector of `length` copies of `value`, of `like`'s element type."""
    vector_type = nn.with_shape(like, (length,))
    return nn.ConstantOp(
        vector_type, value=DenseIntOrFPElementsAttr.from_list(vector_type, [value])
    )


# Float types a fold computes in f32 (see `fold_parameters`).
_NARROW = (BFloat16Type, Float16Type)


def fold_parameters(
    norm: nn.BatchNormOp, weight: SSAValue | None, conv_bias: SSAValue | None
) -> tuple[list[Operation], SSAValue, SSAValue]:
    """The ops (located at `norm`) computing the weight and bias of a convolution with `norm`
    applied to its result: W * s[o] and (b - mean) * s + bias, s = scale / sqrt(var + eps).
    `weight` None stands for a depthwise 1x1 convolution that copies its input (the weight
    is s itself, shaped [C, 1, 1, 1]), `conv_bias` None for a zero bias.

    A norm of a narrower float type (bf16, after `convert-to-bf16`; f16) is folded in f32:
    its parameters widened (exactly), the weight and bias rounded to its type once, at the
    end, as its kernels compute (rounding s, its square root and each product to 8 bits
    would add their errors to the weights')."""
    element_type = nn.tensor_type(norm.var).element_type
    folded: list[Operation] = []

    def widened(value: SSAValue) -> SSAValue:
        if not isinstance(nn.tensor_type(value).element_type, _NARROW):
            return value
        folded.append(cast := nn.CastOp(value, f32))
        return cast.output

    scale, shift, mean, var = (widened(v) for v in norm.operands[1:])
    channels = nn.shape_of(var)[0]
    epsilon = _splat(var, channels, norm.epsilon.value.data)
    variance = nn.AddOp(var, epsilon)
    deviation = nn.SqrtOp(variance.output)
    factor = nn.DivOp(scale, deviation.output)  # s, per output channel
    factor4 = nn.ReshapeOp(factor.output, (channels, 1, 1, 1))
    folded += [epsilon, variance, deviation, factor, factor4]
    if weight is None:
        weight = factor4.output
    else:
        folded.append(scaled_weight := nn.MulOp(widened(weight), factor4.output))
        weight = scaled_weight.output
    if conv_bias is None:
        folded.append(zero := _splat(var, channels, 0.0))
        conv_bias = zero.output
    shifted = nn.SubOp(widened(conv_bias), mean)
    scaled = nn.MulOp(shifted.output, factor.output)
    bias = nn.AddOp(scaled.output, shift)
    folded += [shifted, scaled, bias]
    results = [weight, bias.output]
    if isinstance(element_type, _NARROW):
        folded += (narrowed := [nn.CastOp(v, element_type) for v in results])
        results = [cast.output for cast in narrowed]
    for new_op in folded:
        new_op.location = norm.location  # errors in the folded parameters point at the norm
    return folded, results[0], results[1]


@dataclass
class FoldBatchNormIntoConv(RewritePattern):
    print_remarks: bool

    def _refuse(self, op: nn.BatchNormOp, reason: str) -> None:
        remarks.emit(
            op,
            FoldBatchNormPass.name,
            f"not folded into the convolution: {reason}",
            self.print_remarks,
        )

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.BatchNormOp, rewriter: PatternRewriter) -> None:
        conv = op.input.owner
        if not isinstance(conv, nn.Conv2dOp):
            return
        if KERNEL_ATTR in op.attributes or KERNEL_ATTR in conv.attributes:
            return self._refuse(
                op, "a kernel was chosen already (fold-batch-norm runs before select-dispatch)"
            )
        if not conv.output.has_one_use():
            return self._refuse(op, "the convolution's result has other uses")
        parameters = (
            conv.weight,
            *((conv.bias,) if conv.bias is not None else ()),
            op.scale,
            op.bias,
            op.mean,
            op.var,
        )
        if not all(is_constant(v) for v in parameters):
            return self._refuse(
                op, "the convolution's weights or the batch norm's parameters are not constants"
            )
        folded, weight, bias = fold_parameters(op, conv.weight, conv.bias)
        weight.name_hint = conv.weight.name_hint
        bias.name_hint = (op.bias if conv.bias is None else conv.bias).name_hint
        new_conv = nn.Conv2dOp(
            conv.input,
            weight,
            bias,
            strides=nn.ints(conv.strides),
            pads=nn.ints(conv.pads),
            dilations=nn.ints(conv.dilations),
            groups=conv.groups.value.data,
        )
        new_conv.attributes.update(conv.attributes)
        new_conv.location = conv.location
        new_conv.output.name_hint = conv.output.name_hint
        rewriter.insert([*folded, new_conv], InsertPoint.before(op))
        rewriter.replace_all_uses_with(op.output, new_conv.output)
        rewriter.erase(op)
        rewriter.erase(conv)


@dataclass(frozen=True)
class FoldBatchNormPass(ModulePass):
    name = "fold-batch-norm"

    remarks: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        PatternRewriteWalker(
            FoldBatchNormIntoConv(self.remarks), apply_recursively=False
        ).rewrite_module(op)
