"""`fuse-integer-scale`: dynamic quantization's integer product, its cast to f32, its
multiplication by the scale and the bias add after them become one
`nn.matmul_integer_to_float`.

Why: onnxruntime's `quantize_dynamic` writes every MatMul of a model as
DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul (by a's scale times b's, computed at
run time) -> Add (the bias). Unfused, the product writes an i32 buffer that a cast copies to
f32 and a mul scales, and an add then reads and writes it again: three more passes over the
result, and an i32 buffer as large as the f32 one beside it (figures:
docs/benchmarks-int8.md). Fused, a kernel writes f32 directly, the bias added while the
result is in registers (oneDNN's int8 matmul with a run-time weight scale and an f32 bias:
kernels/onednn/integer_matmul.py), as onnxruntime's MatMulIntegerToFloat does.

    %p = nn.matmul_integer %q, %w zero_point %z : (...) -> tensor<4x16xi32>
    %c = nn.cast %p : tensor<4x16xi32> -> tensor<4x16xf32>
    %m = nn.mul %c, %s : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
    %y = nn.add %m, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  becomes
    %y = nn.matmul_integer_to_float %q, %w scale %s zero_point %z bias(%b : tensor<16xf32>)
        : (...) -> tensor<4x16xf32>

Two patterns, composed by one walk in program order:
* `FuseIntegerScale`: `mul(cast(matmul_integer(...)), s)` (either order), the product read by
  the cast alone and the cast by the mul alone, s f32 of rank 0 or one per column (the
  product's last axis, where b has columns: rank 2 or more), no kernel chosen yet;
* `FuseIntegerBias`: `add(matmul_integer_to_float(...), b)` (either order), b f32 with one
  value per column, the product read by the add alone, no kernel chosen yet.
The fused op's reference kernel computes the ops' roundings (the exact integer sum, its f32
conversion, one f32 product, one f32 sum), so the program computes what it did. It runs
before `select-dispatch` and before `extend-ranks` (which would give s and b the product's
rank), right after `fold-qdq` in `default-pipeline`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
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
            fused = nn.MatmulIntegerToFloatOp(product.a, product.b, scale, product.a_zero_point)
            fused.properties.update(product.properties)
            fused.location = product.location
            fused.output.name_hint = op.output.name_hint
            rewriter.replace(op, fused)
            rewriter.erase(cast)  # type: ignore[arg-type]
            rewriter.erase(product)
            return


@dataclass
class FuseIntegerBias(RewritePattern):
    """add(matmul_integer_to_float(...), b), b f32 with one value per column, the product
    read by the add alone, no kernel chosen: the product with bias b."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.AddOp, rewriter: PatternRewriter) -> None:
        if KERNEL_ATTR in op.attributes:
            return
        for product_side in (0, 1):
            product = op.operands[product_side].owner
            bias = op.operands[1 - product_side]
            if (
                not isinstance(product, nn.MatmulIntegerToFloatOp)
                or product.bias is not None
                or not product.output.has_one_use()
                or KERNEL_ATTR in product.attributes
                or len(nn.shape_of(product.b)) < 2
                or nn.tensor_type(bias).element_type != f32
                or nn.shape_of(bias) != (product.columns(),)
                or nn.shape_of(op.output) != nn.shape_of(product.output)
            ):
                continue
            fused = nn.MatmulIntegerToFloatOp(
                product.a, product.b, product.scale, product.a_zero_point, bias=bias
            )
            if product.b_zero_point is not None:
                fused.properties["b_zero_point"] = product.b_zero_point
            fused.location = product.location
            fused.output.name_hint = op.output.name_hint
            rewriter.replace(op, fused)
            rewriter.erase(product)
            return


@dataclass(frozen=True)
class FuseIntegerScalePass(ModulePass):
    name = "fuse-integer-scale"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        patterns = GreedyRewritePatternApplier([FuseIntegerScale(), FuseIntegerBias()])
        PatternRewriteWalker(patterns, apply_recursively=False).rewrite_module(op)
