"""`fuse-integer-scale`: dynamic quantization's integer product, its cast to f32 and its
multiplication by the scale become one `nn.matmul_integer_to_float`.

Why: onnxruntime's `quantize_dynamic` writes every MatMul of a model as
DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul (by a's scale times b's, computed at
run time) -> Add (the bias). Unfused, the product writes an i32 buffer that a cast copies to
f32 and a mul scales: two more passes over the result, and an i32 buffer as large as the f32
one beside it (figures: docs/benchmarks-int8.md). Fused, a kernel writes f32 directly
(oneDNN's int8 matmul with a run-time weight scale: kernels/onednn/integer_matmul.py), as
onnxruntime's MatMulIntegerToFloat does.

    %p = nn.matmul_integer %q, %w zero_point %z : (...) -> tensor<4x16xi32>
    %c = nn.cast %p : tensor<4x16xi32> -> tensor<4x16xf32>
    %y = nn.mul %c, %s : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  becomes
    %y = nn.matmul_integer_to_float %q, %w scale %s zero_point %z : (...) -> tensor<4x16xf32>

The pattern: `mul(cast(matmul_integer(...)), s)` (either order), the product read by the
cast alone and the cast by the mul alone, s f32 of rank 0 or one value per column (the
product's last axis, where b has columns: rank 2 or more), no kernel chosen yet. The fused
op's reference kernel computes the three ops' roundings (the exact integer sum, its f32
conversion, one f32 product), so the program computes what it did. It runs before
`select-dispatch` and before `extend-ranks` (which would give s the product's rank), right
after `fold-qdq` in `default-pipeline`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import KERNEL_ATTR
from nnlayout.transforms.stages import require_tensor_level


def _product(value: SSAValue) -> nn.MatmulIntegerOp | None:
    """The integer product `value` is the f32 cast of, each read once, no kernel chosen."""
    cast = value.owner
    if not isinstance(cast, nn.CastOp) or not cast.output.has_one_use():
        return None
    product = cast.input.owner
    if (
        not isinstance(product, nn.MatmulIntegerOp)
        or not product.output.has_one_use()
        or nn.tensor_type(cast.output).element_type != f32
        or any(KERNEL_ATTR in op.attributes for op in (cast, product))
    ):
        return None
    return product


@dataclass
class FuseIntegerScale(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.MulOp, rewriter: PatternRewriter) -> None:
        if KERNEL_ATTR in op.attributes:
            return
        for product_side in (0, 1):
            product = _product(op.operands[product_side])
            scale = op.operands[1 - product_side]
            if product is None or nn.tensor_type(scale).element_type != f32:
                continue
            per_column = len(nn.shape_of(product.b)) >= 2  # the product's last axis: b's columns
            if nn.shape_of(scale) not in ((), *(((product.columns(),),) if per_column else ())):
                continue
            if nn.shape_of(op.output) != nn.shape_of(product.output):
                continue
            cast = op.operands[product_side].owner
            zero_point = [] if product.a_zero_point is None else [product.a_zero_point]
            fused = nn.MatmulIntegerToFloatOp.create(
                operands=[product.a, product.b, scale, *zero_point],
                result_types=[op.output.type],
                properties=dict(product.properties),
            )
            fused.location = product.location
            fused.output.name_hint = op.output.name_hint
            rewriter.replace(op, fused)
            rewriter.erase(cast)  # type: ignore[arg-type]
            rewriter.erase(product)
            return


@dataclass(frozen=True)
class FuseIntegerScalePass(ModulePass):
    name = "fuse-integer-scale"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        PatternRewriteWalker(FuseIntegerScale(), apply_recursively=False).rewrite_module(op)
