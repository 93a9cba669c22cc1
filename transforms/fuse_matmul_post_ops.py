"""`fuse-matmul-post-ops{target padding nnan=false remarks=false}`: fold the bias add and
activation after a matrix product into it, where its chosen kernel takes them as post-ops.

oneDNN's matmul and inner product apply a bias and an `eltwise` post-op while the result is
still in registers.

Why: a transformer's Linear is exported as MatMul then Add (the bias), often then GELU
(the MLP); onnxruntime fuses MatMul + Add into one Gemm. Unfused, each bias add and each
activation is a kernel call and a pass over the product's result in memory (ConvNeXt-T: 36
adds and 18 GELUs, vit_b_16: 36 adds and 12 GELUs). Two patterns, each small, composed by
one walk in program order (the add is met before the activation after it):

    %p = nn.matmul %x, %w {kernel = #nn.kernel<"matmul_onednn", ...>}
    %s = nn.add %p, %b {kernel = ...}          // %b: tensor<Nxf32>, a row of the result
    %y = nn.gelu %s approximate "tanh" {kernel = ...}
  becomes
    %y = nn.fused_matmul %x, %w bias %b activation "gelu" approximate "tanh"
           {kernel = #nn.kernel<"fused_matmul_onednn", ...>}

* `FuseBiasIntoMatmul`: `add(matmul(x, w), b)` (either order), w 2-D ([K, N]) and b a
  vector of N (what the exporters write), the product's result used by the add alone;
* `FuseActivationIntoMatmul`: `act(matmul(...))` or `act(fused_matmul(...))` without an
  activation yet, act one of `nn.fused_conv2d`'s activations.

As `fuse-post-ops` (which this pass follows in `default-pipeline`), it runs after
`select-dispatch`, keyed on the product's kernel: that kernel must declare `post_ops` and its
family must have a kernel for `nn.fused_matmul` that accepts the fused op, which then gets
that kernel; otherwise nothing changes and a remark (with `remarks=true`) says why. oneDNN's
kernel accepts an activation whose post-op computes the reference's function on every input
(`eltwise.finite_only`): relu, clip and hardsigmoid only under `nnan` (the program's promise
that no NaN reaches an activation), the exact GELU never (its gelu_erf turns +inf into NaN),
so the exact GELU stays a kernel of its own after a product that takes the bias. The target
and padding are those `select-dispatch` recorded on the module (`recorded_choices`).

The fused op computes the unfused sequence (its reference kernel does exactly that), NaN
and infinities included: the bias is added in float32 after the product, as the add did.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

import nnlayout.transforms.remarks as remarks
from nnlayout.dialects.nn import (
    ACTIVATIONS,
    AddOp,
    FusedMatmulOp,
    MatmulOp,
    ReshapeOp,
    UnaryOp,
    shape_of,
)
from nnlayout.kernels.facts import kernel_facts
from nnlayout.kernels.registry import Target
from nnlayout.transforms.fuse_post_ops import FusionPass, dispatch_fused


@dataclass
class _Fuser:
    """Builds a fused product and asks the chosen kernel's family for it."""

    target: Target
    padding: bool
    nnan: bool
    print_remarks: bool

    def fuse(
        self,
        product: MatmulOp | FusedMatmulOp,
        replaced: Operation,
        bias: SSAValue | None,
        activation: UnaryOp | None,
        rewriter: PatternRewriter,
    ) -> bool:
        """Replaces `replaced` (the add or activation reading `product`) by `product` with
        `bias` and `activation` applied, when a kernel of the family of `product`'s kernel
        accepts it (True); else a remark says why (where a kernel of the family applies)."""
        chosen = kernel_facts(product)
        if chosen is None or not chosen.post_ops:
            return False
        fused = _fused(product, bias, activation, self.nnan)
        reasons = dispatch_fused(fused, product, chosen.family, self.target, self.padding)
        if reasons is None:
            fused.output.name_hint = replaced.results[0].name_hint or product.results[0].name_hint
            rewriter.replace(replaced, fused)
            rewriter.erase(product)
            return True
        if reasons:
            remarks.emit(
                replaced,
                FuseMatmulPostOpsPass.name,
                f"not fused into {product.name} ({chosen.name}): {reasons[0]}",
                self.print_remarks,
            )
        return False


def _fused(
    product: MatmulOp | FusedMatmulOp,
    bias: SSAValue | None,
    activation: UnaryOp | None,
    nnan: bool,
) -> FusedMatmulOp:
    """A detached `nn.fused_matmul`: `product` (with what it fused already) with `bias` and
    `activation` applied."""
    if isinstance(product, FusedMatmulOp):
        bias = product.bias if bias is None else bias
        activation = product.activation_op() if activation is None else activation
        nnan = nnan or product.nnan is not None
        product = MatmulOp(product.lhs, product.rhs)  # detached: what the fused op reads
        fused = FusedMatmulOp(product, bias, activation, nnan)
        product.erase()
        return fused
    return FusedMatmulOp(product, bias, activation, nnan)


def _fusable(value: SSAValue) -> MatmulOp | FusedMatmulOp | None:
    """The product of a 2-D right operand producing `value`, if `value` has no other use."""
    product = value.owner
    if (
        isinstance(product, MatmulOp | FusedMatmulOp)
        and value.has_one_use()
        and len(shape_of(product.rhs)) == 2
    ):
        return product
    return None


def _row(value: SSAValue, columns: int) -> SSAValue | None:
    """The vector of `columns` that `value` is: itself, or the vector `extend-ranks`
    reshaped to [1, ..., 1, columns]; else None."""
    if tuple(shape_of(value)) == (columns,):
        return value
    reshape = value.owner
    if (
        isinstance(reshape, ReshapeOp)
        and set(shape_of(value)[:-1]) <= {1}
        and tuple(shape_of(reshape.input)) == (columns,)
    ):
        return reshape.input
    return None


@dataclass
class FuseBiasIntoMatmul(RewritePattern):
    """`add(matmul(x, w), b)` -> `fused_matmul(x, w) bias b`; w [K, N] and b a vector of N
    (or its reshape to [1, ..., 1, N], which goes where nothing else reads it)."""

    fuser: _Fuser

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AddOp, rewriter: PatternRewriter) -> None:
        for value, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            product = _fusable(value)
            if (
                product is None
                or other is value
                or op.output.type != value.type
                or (
                    isinstance(product, FusedMatmulOp)
                    and (product.bias is not None or product.activation is not None)
                )
            ):
                continue
            bias = _row(other, shape_of(product.rhs)[1])
            if bias is None:
                continue
            reshape = other.owner if bias is not other else None
            fused = self.fuser.fuse(product, op, bias, None, rewriter)
            if fused and reshape is not None and not reshape.results[0].uses:
                rewriter.erase(reshape)
            return


@dataclass
class FuseActivationIntoMatmul(RewritePattern):
    """`act(matmul(...))` -> `fused_matmul(...) activation "act"`."""

    fuser: _Fuser

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: UnaryOp, rewriter: PatternRewriter) -> None:
        if type(op) not in ACTIVATIONS.values():
            return
        product = _fusable(op.input)
        if product is None or (
            isinstance(product, FusedMatmulOp) and product.activation is not None
        ):
            return
        self.fuser.fuse(product, op, None, op, rewriter)


@dataclass(frozen=True)
class FuseMatmulPostOpsPass(FusionPass):
    name = "fuse-matmul-post-ops"

    def patterns(self, target: Target, padding: bool) -> list[RewritePattern]:
        fuser = _Fuser(target, padding, self.nnan, self.remarks)
        return [FuseBiasIntoMatmul(fuser), FuseActivationIntoMatmul(fuser)]
